package kube

import (
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshreg/meshreg/model"
)

// Expected reasons for a pod to yield no workload instance.
var (
	// errPodNoIP: the pod has no (well-formed) IP yet.
	errPodNoIP = errors.New("pod has no IP")
	// errPodTerminal: the pod has Succeeded or Failed.
	errPodTerminal = errors.New("pod is in a terminal phase")
)

// podEnv is what pod conversion needs besides the pod.
type podEnv struct {
	cluster     model.ClusterID
	trustDomain string
	// node is the locality of the pod's node; zero when the node is
	// unknown.
	node model.Locality
	// network decides the network when the pod has no network label.
	network networkEnv
	// sharer, when set, shares the endpoint label maps of pods with
	// equal labels and topology.
	sharer *labelSharer
}

// podEndpoint returns the metadata an endpoint takes from its pod: labels
// (with the topology labels, see endpointLabels), locality, network,
// cluster, SPIFFE identity, TLS mode, node, DNS names and workload. Addresses are the
// pod's; Port and ServicePortName are zero, Health is Healthy and
// Serving true.
func podEndpoint(pod *podInfo, env podEnv) model.Endpoint {
	addrs := pod.addrs
	loc := podLocality(pod.labels, env.node)
	network := resolveNetwork(pod.labels, addrs, env.network)
	return model.Endpoint{
		Addresses:         addrs,
		Labels:            env.sharer.labels(pod.labels, loc, network, pod.nodeName, env.cluster),
		Locality:          loc,
		Network:           network,
		Cluster:           env.cluster,
		ServiceAccount:    model.SpiffeIdentity(env.trustDomain, pod.namespace, pod.serviceAccount),
		TLSMode:           model.ParseTLSMode(pod.labels[labelTLSMode]),
		NodeName:          pod.nodeName,
		PodHostname:       pod.hostname,
		PodSubdomain:      pod.subdomain,
		Serving:           true,
		WorkloadKind:      model.KindPod,
		WorkloadNamespace: pod.namespace,
		WorkloadName:      pod.name,
	}
}

// anonymousEndpoint returns the metadata of an endpoint that no pod
// backs (no targetRef, and no pod lending its metadata by IP): its
// cluster, the network of its address, and the node the slice names. As
// in Istio, it takes nothing from that node: the locality comes from a
// pod. Addresses are set by the caller.
func anonymousEndpoint(addrs []netip.Addr, nodeName string, env podEnv) model.Endpoint {
	network := resolveNetwork(nil, addrs, env.network)
	return model.Endpoint{
		Labels:   endpointLabels(nil, model.Locality{}, network, "", env.cluster),
		Network:  network,
		Cluster:  env.cluster,
		NodeName: nodeName,
		Serving:  true,
	}
}

// podWorkload converts a pod into the WorkloadInstance (kind Pod) that
// ServiceEntry workload selectors select. A pod without an IP, or in a
// terminal phase (Succeeded, Failed), yields no instance: the error, which
// wraps errPodNoIP or errPodTerminal, names the pod.
func podWorkload(pod *podInfo, env podEnv) (*model.WorkloadInstance, error) {
	w, err := podInstance(pod, env)
	if err != nil {
		return nil, err
	}
	w.PortMap = podPortMap(pod)
	return w, nil
}

// podInstance is podWorkload without the port map, which the controller
// shares among pods (see portMaps).
func podInstance(pod *podInfo, env podEnv) (*model.WorkloadInstance, error) {
	if !podIsLive(pod) {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.namespace, pod.name, errPodTerminal)
	}
	ep := podEndpoint(pod, env)
	if len(ep.Addresses) == 0 {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.namespace, pod.name, errPodNoIP)
	}
	if !podServes(pod) {
		ep.Health, ep.Serving = model.Unhealthy, false
	}
	return &model.WorkloadInstance{
		Kind:         model.KindPod,
		Namespace:    pod.namespace,
		Name:         pod.name,
		Endpoint:     ep,
		WorkloadName: pod.workloadName,
		HostNetwork:  pod.hostNetwork,
		Redirected:   pod.redirected,
	}, nil
}

// podPortMap maps a pod's named container ports to their numbers; for a
// name used twice the first container port wins. Nil when no port is
// named.
func podPortMap(pod *podInfo) map[string]uint32 {
	var out map[string]uint32
	for _, p := range pod.ports {
		if p.port < 1 || p.port > 65535 {
			continue
		}
		if out == nil {
			out = map[string]uint32{}
		}
		if _, dup := out[p.name]; !dup {
			out[p.name] = uint32(p.port)
		}
	}
	return out
}

// podIsLive reports whether a pod may own its IPs: it is not in a terminal
// phase. Terminal pods keep their IP in status, but the IP may already
// belong to a new pod.
func podIsLive(pod *podInfo) bool {
	return pod.phase != corev1.PodSucceeded && pod.phase != corev1.PodFailed
}

// podServes reports whether a pod can serve traffic, as Istio decides it
// for the pods it hands to ServiceEntry selectors: live, Ready, not being
// deleted, and with an IP. Other live pods with an IP are published
// Unhealthy: ServiceEntry selectors and the dump skip them, the ambient
// index (package address) lists them.
func podServes(pod *podInfo) bool {
	return podIsLive(pod) && pod.ready && !pod.deleting && len(pod.addrs) > 0
}

// podLendsByIP reports whether a pod lends its metadata to a slice
// endpoint of its namespace that names no pod but holds its IP (a
// manually managed slice): a pod that serves (as Istio's pod cache holds
// only those), and not a hostNetwork pod, whose IP is its node's, shared
// by every hostNetwork pod there.
func podLendsByIP(pod *podInfo) bool {
	return podServes(pod) && !pod.hostNetwork
}
