package kube

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// The on* functions apply one object's change (nil: deleted) to the
// cluster and mark dirty what it affects; the next flush converts what is
// dirty. They run on the worker (see inbox).

// dirtySet is what the next flush converts again.
type dirtySet struct {
	services set[types.NamespacedName]
	pods     set[types.NamespacedName]
	// gateways is set when a gateway candidate or a node it may be
	// reached at changed.
	gateways bool
	// namespaces and apiGateways are the namespaces and Gateway API
	// Gateways to publish again (see metadata.go).
	namespaces  set[string]
	apiGateways set[types.NamespacedName]
}

func newDirtySet() dirtySet {
	return dirtySet{services: set[types.NamespacedName]{}, pods: set[types.NamespacedName]{},
		namespaces: set[string]{}, apiGateways: set[types.NamespacedName]{}}
}

// maxReusedDirty is the size above which reset drops a dirty set's map
// instead of clearing it: a Go map never shrinks, and ranging over or
// clearing one costs its capacity, not its length.
const maxReusedDirty = 64

// reset empties the sets after a flush.
func (d *dirtySet) reset() {
	d.gateways = false
	clear(d.namespaces)
	clear(d.apiGateways)
	for _, m := range []*set[types.NamespacedName]{&d.services, &d.pods} {
		if len(*m) > maxReusedDirty {
			*m = set[types.NamespacedName]{}
		} else {
			clear(*m)
		}
	}
}

// markService and markPod mark a service or a pod dirty. Before the
// initial lists are in, they do nothing: the initial conversion converts
// every object.
func (c *Controller) markService(key types.NamespacedName) {
	if c.primed {
		c.dirty.services[key] = struct{}{}
	}
}

func (c *Controller) markPod(key types.NamespacedName) {
	if c.primed {
		c.dirty.pods[key] = struct{}{}
	}
}

// markPodDependents marks a pod's workload and the services whose
// endpoints the pod, with those IPs, may back (see graph).
func (c *Controller) markPodDependents(key types.NamespacedName, addrs ...[]netip.Addr) {
	c.markPod(key)
	for _, as := range addrs {
		c.cl.graph.slicesOf(key, as, func(slice types.NamespacedName) {
			if owner, ok := c.cl.sliceOwner[slice]; ok {
				c.markService(owner)
			}
		})
	}
}

// onService: the service itself changes.
func (c *Controller) onService(key types.NamespacedName, svc *corev1.Service) {
	if svc != nil {
		c.metrics.Applied("Service", lastWrite(&svc.ObjectMeta))
	}
	if c.cl.setService(key, svc) || c.meshGateways[key] != nil {
		c.markGateways()
	}
	c.markService(key)
}

// onSlice: the services owning the slice before and after the change.
func (c *Controller) onSlice(key types.NamespacedName, s *sliceInfo) {
	if s != nil {
		c.metrics.Applied("EndpointSlice", s.writtenTime())
	}
	for _, svc := range c.cl.setSlice(key, s) {
		c.markService(svc)
	}
}

// onPod: the pod's workload, and the services whose endpoints named the
// pod or may take its metadata by one of its old or new IPs.
func (c *Controller) onPod(key types.NamespacedName, pod *podInfo) {
	if pod != nil {
		c.metrics.Applied("Pod", pod.writtenTime())
	}
	old := c.cl.setPod(key, pod)
	if old != nil && old != pod {
		c.dropPodMemo(old)
	}
	var was, is []netip.Addr
	if old != nil {
		was = old.addrs
	}
	if pod != nil {
		is = pod.addrs
	}
	c.markPodDependents(key, was, is)
}

// onNode: the workloads of the node's pods, and the services whose
// endpoints took the node's locality from those pods.
func (c *Controller) onNode(key types.NamespacedName, node *corev1.Node) {
	locality, gateway := c.cl.setNode(key.Name, node)
	if gateway && c.hasNodePortGateway() {
		c.markGateways()
	}
	if !locality {
		return
	}
	for _, k := range c.cl.podsByNode[key.Name] {
		c.markPodDependents(k, c.cl.pods[k].addrs)
	}
}

// onNamespace: when the namespace's selection changes, every object of
// the namespace; when its traffic distribution annotation changes, its
// services; when the system namespace's network label changes (and
// Options.Network is unset), everything. Both are rare, so these visit
// every service, slice owner and pod of the controller.
func (c *Controller) onNamespace(key types.NamespacedName, ns *corev1.Namespace) {
	name := key.Name
	c.markNamespace(name)
	wasSelected := c.namespaceSelected(name)
	wasTraffic := c.nsTraffic(name)
	if ns == nil {
		delete(c.cl.namespaces, name)
	} else {
		c.cl.namespaces[name] = ns
	}
	if name == c.opts.SystemNamespace && c.updateNetworkEnv() {
		return // everything is marked
	}
	if wasSelected != c.namespaceSelected(name) {
		c.markAll(name)
		return
	}
	if wasTraffic != c.nsTraffic(name) {
		// Its services' traffic distribution may follow it.
		for svc := range c.cl.servicesByNS[name] {
			c.markService(types.NamespacedName{Namespace: name, Name: svc})
		}
	}
}

// onEntry: the services of the entry's namespace whose selectors match
// it, before or after.
func (c *Controller) onEntry(key model.WorkloadKey, we *model.WorkloadInstance) {
	old := c.cl.setEntry(key, we)
	for name := range c.cl.servicesByNS[key.Namespace] {
		svcKey := types.NamespacedName{Namespace: key.Namespace, Name: name}
		sel := c.cl.services[svcKey].Spec.Selector
		if (old != nil && len(sel) > 0 && model.SelectorMatches(sel, old.Endpoint.Labels)) ||
			(we != nil && len(sel) > 0 && model.SelectorMatches(sel, we.Endpoint.Labels)) {
			c.markService(svcKey)
		}
	}
}

// markAll marks dirty every service, slice owner, export, import and pod of a namespace,
// or of every namespace when ns is "", and the gateways.
func (c *Controller) markAll(ns string) {
	c.markGateways()
	for k := range c.cl.services {
		if ns == "" || k.Namespace == ns {
			c.markService(k)
		}
	}
	for k := range c.cl.slices {
		if ns == "" || k.Namespace == ns {
			c.markService(k)
		}
	}
	for k := range c.cl.exports {
		if ns == "" || k.Namespace == ns {
			c.markService(k)
		}
	}
	for k := range c.cl.imports {
		if ns == "" || k.Namespace == ns {
			c.markService(k)
		}
	}
	for k := range c.cl.pods {
		if ns == "" || k.Namespace == ns {
			c.markPod(k)
		}
	}
}

// namespaceSelected reports whether the controller serves a namespace:
// always without a NamespaceSelector, else when the namespace exists and
// its labels match.
func (c *Controller) namespaceSelected(name string) bool {
	if c.nsSel == nil {
		return true
	}
	ns := c.cl.namespaces[name]
	return ns != nil && c.nsSel.Matches(labels.Set(ns.Labels))
}
