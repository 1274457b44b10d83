package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/meshreg/meshreg/model"
)

// podMemo is a pod's workload instance, memoized for one pod object, one
// node object and one cluster network, in the controller's podMemos (by
// the pod object): never in the pod object, which the informer's cache
// holds. A memo holds a share of its workload's port map (see portMaps),
// acquired with its pod object.
type podMemo struct {
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
// alone (cluster, trust domain and network ranges are fixed), so the memo
// is kept for its pod object (the informer hands a new object for every
// change) and reused for the same node object (onNode keeps the old
// object when the labels did not change) and the same network. It goes
// with its pod object, or when the pod yields no workload. It runs on
// the worker.
func (c *Controller) podWorkload(pod *podInfo) (*model.WorkloadInstance, error) {
	if w := c.currentMemo(pod); w != nil {
		return w, nil
	}
	w, err := podInstance(pod, c.podEnv(pod.nodeName))
	return c.memoize(pod, w, err)
}

// memoize records podInstance's result for a pod as its memoized
// workload, with the shared port map, and returns it; an error leaves
// the pod without a memo. It runs on the worker.
func (c *Controller) memoize(pod *podInfo, w *model.WorkloadInstance, err error) (*model.WorkloadInstance, error) {
	c.dropPodMemo(pod)
	if err != nil {
		return nil, err
	}
	w.PortMap = c.portMaps.acquire(pod) // w is not shared yet
	c.podMemos[pod] = podMemo{pod: pod, node: c.cl.nodes[pod.nodeName], network: c.net.cluster, w: w}
	return w, nil
}

// currentMemo returns the pod's memoized workload if it was computed for
// the pod's current node object and network, else nil. It runs on
// the worker.
func (c *Controller) currentMemo(pod *podInfo) *model.WorkloadInstance {
	if m, ok := c.podMemos[pod]; ok && m.node == c.cl.nodes[pod.nodeName] && m.network == c.net.cluster {
		return m.w
	}
	return nil
}

// dropPodMemo forgets a pod object's memoized workload. It runs on the
// worker.
func (c *Controller) dropPodMemo(pod *podInfo) {
	if _, ok := c.podMemos[pod]; ok {
		c.portMaps.release(pod)
		delete(c.podMemos, pod)
	}
}

// podEndpoint returns the pod's endpoint metadata: its workload's
// endpoint, or, for a pod that yields no workload (no IP in its status
// yet, or terminal) but is named by a slice, podEndpoint computed afresh.
// With memoize false, a memo that is not current is neither used nor
// replaced: the result is computed afresh. The result is shared: read
// it, do not change it. It runs on the worker.
func (c *Controller) podEndpoint(pod *podInfo, memoize bool) *model.Endpoint {
	if memoize {
		if w, err := c.podWorkload(pod); err == nil {
			return &w.Endpoint
		}
	} else if w := c.currentMemo(pod); w != nil {
		return &w.Endpoint
	}
	ep := podEndpoint(pod, c.podEnv(pod.nodeName))
	return &ep
}
