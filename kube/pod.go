package kube

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// podInfo is the controller's cached form of a Pod: the pod informer's
// transform (stripPod) turns every Pod into one, so the informer cache and
// the controller hold these instead of corev1.Pod. A corev1.Pod struct is
// over a kilobyte before any of its contents; a podInfo keeps only what
// conversion reads, with the IPs already parsed. A podInfo is never
// modified once built: an informer hands a new one for every change.
type podInfo struct {
	objectMeta
	nodeName       string
	serviceAccount string
	phase          corev1.PodPhase
	// addrs are the pod's IPs (see podAddresses).
	addrs []netip.Addr
	// ports are the named container ports, in container order.
	ports []namedPort

	// memo is the pod's workload (Controller.podWorkload), kept with the
	// object it was computed from. It is guarded by the Controller's
	// mutex (the initial conversion's workers write it for the goroutine
	// holding the mutex, one worker per pod); client-go reads only the
	// object's metadata.
	memo podMemo
}

// namedPort is a named container port.
type namedPort struct {
	name string
	port int32
}

// newPodInfo returns the cached form of a pod.
func newPodInfo(pod *corev1.Pod) *podInfo {
	p := &podInfo{
		objectMeta: objectMeta{
			namespace:       pod.Namespace,
			name:            pod.Name,
			resourceVersion: pod.ResourceVersion,
			labels:          pod.Labels,
		},
		nodeName:       pod.Spec.NodeName,
		serviceAccount: pod.Spec.ServiceAccountName,
		phase:          pod.Status.Phase,
		addrs:          podAddresses(&pod.Status),
	}
	n := 0
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name != "" {
				n++
			}
		}
	}
	if n > 0 {
		p.ports = make([]namedPort, 0, n)
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name != "" {
					p.ports = append(p.ports, namedPort{name: cp.Name, port: cp.ContainerPort})
				}
			}
		}
	}
	return p
}

// podAddresses returns a pod's IPs (status.podIPs, else status.podIP),
// IPv4 first, without duplicates. Malformed values are skipped: the
// kubelet writes these fields, so a malformed one is not worth a
// diagnostic.
func podAddresses(status *corev1.PodStatus) []netip.Addr {
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
	for _, ip := range status.PodIPs {
		add(ip.IP)
	}
	if len(out) == 0 {
		add(status.PodIP)
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
	return slices.Clip(out)
}
