package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// podMetaEntry is a pod's workload instance, memoized for one pod object
// on one node object in one cluster network. An entry holds a share of
// its workload's port map (see portMaps).
type podMetaEntry struct {
	pod     *podInfo
	node    *corev1.Node
	network model.NetworkID
	w       *model.WorkloadInstance
}

// podWorkload returns the pod's workload instance (podWorkload(pod,
// c.podEnv(node)), with a port map shared among pods naming the same
// ports), computed once per pod object and environment. The workload's
// Endpoint is also the pod's endpoint metadata (see podEndpoint), so the
// workload and the endpoints of every service the pod backs share one
// label map, and a service whose endpoints are recomputed (a slice
// change) does not rebuild its pods' metadata. The workload is a function
// of the pod and of the environment's node labels and cluster network
// alone (cluster, trust domain and network ranges are fixed), so an entry
// is reused only for the same pod object (the informer hands a new object
// for every change), the same node object (onNode keeps the old object
// when the labels did not change) and the same network. Entries go when
// their pod is deleted or yields no workload. c.mu must be held.
func (c *Controller) podWorkload(pod *podInfo) (*model.WorkloadInstance, error) {
	key := pod.key()
	node := c.objs.nodes[pod.nodeName]
	if e, ok := c.podMeta[key]; ok && e.pod == pod && e.node == node && e.network == c.net.cluster {
		return e.w, nil
	}
	w, err := podInstance(pod, c.podEnv(pod.nodeName))
	if err != nil {
		c.dropPodMeta(key)
		return nil, err
	}
	w.PortMap = c.portMaps.acquire(pod) // w is not shared yet
	c.dropPodMeta(key)
	c.podMeta[key] = podMetaEntry{pod: pod, node: node, network: c.net.cluster, w: w}
	return w, nil
}

// dropPodMeta forgets a pod's memoized workload. c.mu must be held.
func (c *Controller) dropPodMeta(key types.NamespacedName) {
	if e, ok := c.podMeta[key]; ok {
		c.portMaps.release(e.pod)
		delete(c.podMeta, key)
	}
}

// podEndpoint returns the pod's endpoint metadata: its workload's
// endpoint, or, for a pod that yields no workload (no IP in its status
// yet, or terminal) but is named by a slice, podEndpoint computed afresh.
// c.mu must be held.
func (c *Controller) podEndpoint(pod *podInfo) model.Endpoint {
	if w, err := c.podWorkload(pod); err == nil {
		return w.Endpoint
	}
	return podEndpoint(pod, c.podEnv(pod.nodeName))
}
