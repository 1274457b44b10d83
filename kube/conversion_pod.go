package kube

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

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
}

// podAddresses returns a pod's IPs (status.podIPs, else status.podIP),
// IPv4 first, without duplicates. Malformed values are skipped: the
// kubelet writes these fields, so a malformed one is not worth a
// diagnostic.
func podAddresses(pod *corev1.Pod) []netip.Addr {
	var out []netip.Addr
	add := func(s string) {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return
		}
		if a = a.Unmap(); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	for _, ip := range pod.Status.PodIPs {
		add(ip.IP)
	}
	if len(out) == 0 {
		add(pod.Status.PodIP)
	}
	slices.SortStableFunc(out, func(a, b netip.Addr) int {
		switch {
		case a.Is4() == b.Is4():
			return 0
		case a.Is4():
			return -1
		}
		return 1
	})
	return out
}

// podEndpoint returns the metadata an endpoint takes from its pod: labels
// (with the topology labels, see endpointLabels), locality, network,
// cluster, SPIFFE identity, TLS mode, node and workload. Addresses are the
// pod's; Port and ServicePortName are zero and Health is Healthy.
func podEndpoint(pod *corev1.Pod, env podEnv) model.Endpoint {
	addrs := podAddresses(pod)
	loc := podLocality(pod.Labels, env.node)
	network := resolveNetwork(pod.Labels, addrs, env.network)
	return model.Endpoint{
		Addresses:         addrs,
		Labels:            endpointLabels(pod.Labels, loc, network, env.cluster),
		Locality:          loc,
		Network:           network,
		Cluster:           env.cluster,
		ServiceAccount:    model.SpiffeIdentity(env.trustDomain, pod.Namespace, pod.Spec.ServiceAccountName),
		TLSMode:           model.ParseTLSMode(pod.Labels[labelTLSMode]),
		NodeName:          pod.Spec.NodeName,
		WorkloadKind:      model.KindPod,
		WorkloadNamespace: pod.Namespace,
		WorkloadName:      pod.Name,
	}
}

// anonymousEndpoint returns the metadata of an endpoint whose pod is not
// known (no targetRef, and no pod with its address): only the topology of
// its node and address. Addresses are set by the caller.
func anonymousEndpoint(addrs []netip.Addr, nodeName string, env podEnv) model.Endpoint {
	network := resolveNetwork(nil, addrs, env.network)
	return model.Endpoint{
		Labels:   endpointLabels(nil, env.node, network, env.cluster),
		Locality: env.node,
		Network:  network,
		Cluster:  env.cluster,
		NodeName: nodeName,
	}
}

// podWorkload converts a pod into the WorkloadInstance (kind Pod) that
// ServiceEntry workload selectors select. A pod without an IP, or in a
// terminal phase (Succeeded, Failed), yields no instance: the error, which
// wraps errPodNoIP or errPodTerminal, names the pod.
func podWorkload(pod *corev1.Pod, env podEnv) (*model.WorkloadInstance, error) {
	return podWorkloadWith(pod, func() model.Endpoint { return podEndpoint(pod, env) })
}

// podWorkloadWith is podWorkload with the pod's endpoint metadata (what
// podEndpoint returns) from meta, called only for a pod that is not
// terminal.
func podWorkloadWith(pod *corev1.Pod, meta func() model.Endpoint) (*model.WorkloadInstance, error) {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, errPodTerminal)
	}
	ep := meta()
	if len(ep.Addresses) == 0 {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, errPodNoIP)
	}
	return &model.WorkloadInstance{
		Kind:      model.KindPod,
		Namespace: pod.Namespace,
		Name:      pod.Name,
		Endpoint:  ep,
		PortMap:   podPortMap(pod),
	}, nil
}

// podPortMap maps a pod's named container ports to their numbers; for a
// name used twice the first container port wins. Nil when no port is
// named.
func podPortMap(pod *corev1.Pod) map[string]uint32 {
	var out map[string]uint32
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "" || p.ContainerPort < 1 || p.ContainerPort > 65535 {
				continue
			}
			if out == nil {
				out = map[string]uint32{}
			}
			if _, dup := out[p.Name]; !dup {
				out[p.Name] = uint32(p.ContainerPort)
			}
		}
	}
	return out
}

// podIsLive reports whether a pod may own its IPs: it is not in a terminal
// phase. Terminal pods keep their IP in status, but the IP may already
// belong to a new pod.
func podIsLive(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}
