package kube

import (
	"github.com/meshreg/meshreg/model"
)

// podMetaEntry is podEndpoint's result for one pod object in one
// environment.
type podMetaEntry struct {
	pod     *podInfo
	node    model.Locality
	network model.NetworkID
	ep      model.Endpoint
}

// podEndpoint returns podEndpoint(pod, c.podEnv(node)), computed once per
// pod object and environment: the pod's workload and the endpoints of
// every service it backs then share one label map, and a service whose
// endpoints are recomputed (a slice change) does not rebuild its pods'
// metadata. podEndpoint is a function of the pod and of the environment's
// node locality and cluster network alone (cluster, trust domain and
// network ranges are fixed), so an entry is reused only for the same pod
// object (the informer hands a new object for every change) and the same
// two values. Entries go when their pod is deleted. c.mu must be held.
func (c *Controller) podEndpoint(pod *podInfo) model.Endpoint {
	env := c.podEnv(pod.nodeName)
	key := pod.key()
	if e, ok := c.podMeta[key]; ok && e.pod == pod && e.node == env.node && e.network == env.network.cluster {
		return e.ep
	}
	ep := podEndpoint(pod, env)
	c.podMeta[key] = podMetaEntry{pod: pod, node: env.node, network: env.network.cluster, ep: ep}
	return ep
}
