package kube

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/internal/intern"
	"github.com/meshreg/meshreg/model"
)

// podInfo is the controller's cached form of a Pod: the pod informer's
// transform (stripPods) turns every Pod into one, so the informer cache and
// the controller hold these instead of corev1.Pod. A corev1.Pod struct is
// over a kilobyte before any of its contents; a podInfo keeps only what
// conversion reads, with the IPs already parsed. A podInfo is never
// modified once built: an informer hands a new one for every change.
type podInfo struct {
	objectMeta
	nodeName       string
	serviceAccount string
	phase          corev1.PodPhase
	// ready is the pod's Ready condition; deleting is set once the pod
	// has a deletion timestamp; hostNetwork is spec.hostNetwork.
	ready, deleting, hostNetwork bool
	// hostname and subdomain are the pod's DNS names in a headless
	// Service (see podDNSNames).
	hostname, subdomain string
	// addrs are the pod's IPs (see podAddresses).
	addrs []netip.Addr
	// ports are the named TCP ports of the containers and of the native
	// sidecars (see podPorts), in container order.
	ports []namedPort
	// workloadName is the pod's workload (see podWorkloadName);
	// redirected is set by the ambient redirection annotation.
	workloadName string
	redirected   bool
	// shared keeps labels interned (see intern.Maps): labels is
	// shared.M, the one map of the pods with these labels; nil when
	// labels are not interned.
	shared *intern.Labels
}

// namedPort is a named container port.
type namedPort struct {
	name string
	port int32
}

// newPodInfo returns the cached form of a pod, its labels interned in
// labels (nil: not interned).
func newPodInfo(pod *corev1.Pod, labels *intern.Maps) *podInfo {
	p := &podInfo{
		objectMeta: objectMeta{
			namespace:       pod.Namespace,
			name:            pod.Name,
			resourceVersion: pod.ResourceVersion,
			labels:          pod.Labels,
			written:         writtenAt(&pod.ObjectMeta),
		},
		nodeName:       pod.Spec.NodeName,
		serviceAccount: pod.Spec.ServiceAccountName,
		phase:          pod.Status.Phase,
		ready:          podReady(&pod.Status),
		deleting:       pod.DeletionTimestamp != nil,
		hostNetwork:    pod.Spec.HostNetwork,
		addrs:          podAddresses(&pod.Status),
		ports:          podPorts(&pod.Spec),
		workloadName:   podWorkloadName(pod),
		redirected:     pod.Annotations[model.AmbientRedirectionAnnotation] == "enabled",
	}
	p.hostname, p.subdomain = podDNSNames(pod)
	if labels != nil {
		p.shared = labels.Labels(pod.Labels)
		p.labels = nil
		if p.shared != nil {
			p.labels = p.shared.M
		}
	}
	return p
}

// podReady reports whether the pod's Ready condition is True.
func podReady(status *corev1.PodStatus) bool {
	for _, c := range status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podDNSNames returns the DNS names a pod has in a headless Service, as
// Istio reads them: with spec.subdomain set, spec.hostname (else the pod's
// name) and the subdomain; none otherwise.
func podDNSNames(pod *corev1.Pod) (hostname, subdomain string) {
	if pod.Spec.Subdomain == "" {
		return "", ""
	}
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname, pod.Spec.Subdomain
	}
	return pod.Name, pod.Spec.Subdomain
}

// podPorts returns the named container ports a workload's port map is
// made of, as Istio reads them: TCP ports only (an unset protocol is TCP,
// the API's default), of the containers and then of the native sidecars
// (init containers with restartPolicy Always), in order.
func podPorts(spec *corev1.PodSpec) []namedPort {
	var out []namedPort
	add := func(cs []corev1.Container) {
		for _, c := range cs {
			for _, cp := range c.Ports {
				if cp.Name != "" && (cp.Protocol == "" || cp.Protocol == corev1.ProtocolTCP) {
					out = append(out, namedPort{name: cp.Name, port: cp.ContainerPort})
				}
			}
		}
	}
	add(spec.Containers)
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add([]corev1.Container{c})
		}
	}
	return slices.Clip(out)
}

// podAddresses returns a pod's IPs (status.podIPs, else status.podIP), in
// the pod's order (primary first: IPv6 first in an IPv6-primary cluster),
// at most one per family (as the API allows). Malformed values are skipped: the kubelet writes
// these fields, so a malformed one is not worth a diagnostic.
func podAddresses(status *corev1.PodStatus) []netip.Addr {
	var out []netip.Addr
	add := func(s string) {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return
		}
		a = a.Unmap()
		if !slices.ContainsFunc(out, func(b netip.Addr) bool { return b.Is4() == a.Is4() }) {
			out = append(out, a)
		}
	}
	for _, ip := range status.PodIPs {
		add(ip.IP)
	}
	if len(out) == 0 {
		add(status.PodIP)
	}
	return slices.Clip(out)
}

// cronJobName matches the name of a Job a CronJob created: the CronJob's
// name and a timestamp of 8 to 10 digits.
var cronJobName = regexp.MustCompile(`^(.+)-\d{8,10}$`)

// podWorkloadName returns the name of the workload a pod is one of, as
// Istio derives it: the service.istio.io/workload-name label; else, for a
// pod with a generated name, its controller's name, with a ReplicaSet
// read as its Deployment (the pod-template-hash suffix dropped, or the
// rollouts-pod-template-hash one), a ReplicationController of an
// OpenShift DeploymentConfig as that config, and a Job named like a
// CronJob's as the CronJob; else the pod's name.
func podWorkloadName(pod *corev1.Pod) string {
	if wn, ok := pod.Labels[model.WorkloadNameLabel]; ok {
		return wn
	}
	if pod.GenerateName == "" {
		return pod.Name
	}
	var ctrl *metav1.OwnerReference
	for i := range pod.OwnerReferences {
		if r := &pod.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			ctrl = r
			break
		}
	}
	if ctrl == nil || ctrl.Name == "" {
		return pod.Name
	}
	hash, rollout := pod.Labels["pod-template-hash"], pod.Labels["rollouts-pod-template-hash"]
	switch {
	case ctrl.Kind == "ReplicaSet" && hash != "" && strings.HasSuffix(ctrl.Name, hash):
		return strings.TrimSuffix(ctrl.Name, "-"+hash)
	case ctrl.Kind == "ReplicaSet" && rollout != "" && strings.HasSuffix(ctrl.Name, rollout):
		return strings.TrimSuffix(ctrl.Name, "-"+rollout)
	case ctrl.Kind == "ReplicationController" && pod.Labels["deploymentconfig"] != "":
		return pod.Labels["deploymentconfig"]
	case ctrl.Kind == "Job":
		if m := cronJobName.FindStringSubmatch(ctrl.Name); m != nil {
			return m[1]
		}
	}
	return ctrl.Name
}
