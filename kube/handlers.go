package kube

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// The on* functions record one informer change (obj nil on delete) and
// mark dirty what it affects. They run with c.mu held; flushLocked then
// converts what is dirty.

// dirtySet is what the next flush converts again.
type dirtySet struct {
	services set[types.NamespacedName]
	pods     set[types.NamespacedName]
}

func newDirtySet() dirtySet {
	return dirtySet{services: set[types.NamespacedName]{}, pods: set[types.NamespacedName]{}}
}

// maxReusedDirty is the size above which reset drops a dirty set's map
// instead of clearing it: a Go map never shrinks, and ranging over or
// clearing one costs its capacity, not its length. Without this, the
// initial flush (every object dirty) would leave maps that every later
// single-object flush walks in full.
const maxReusedDirty = 64

// reset empties the sets after a flush.
func (d *dirtySet) reset() {
	for _, m := range []*set[types.NamespacedName]{&d.services, &d.pods} {
		if len(*m) > maxReusedDirty {
			*m = set[types.NamespacedName]{}
		} else {
			clear(*m)
		}
	}
}

// markService and markPod mark a service or a pod dirty. Before the
// initial lists are in, they do nothing: the initial conversion
// (primeLocked) converts every object.
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

func (c *Controller) markDependents(d dep) {
	for _, svc := range c.objs.dependents(d) {
		c.markService(svc)
	}
}

// onService: the service itself changes.
func (c *Controller) onService(key types.NamespacedName, svc *corev1.Service) {
	c.objs.setService(key, svc)
	c.markService(key)
}

// onSlice: the services owning the slice before and after change.
func (c *Controller) onSlice(key types.NamespacedName, s *sliceInfo) {
	for _, svc := range c.objs.setSlice(key, s) {
		c.markService(svc)
	}
}

// onPod: the pod's workload, and the services whose endpoints named the
// pod or looked up one of its old or new IPs.
func (c *Controller) onPod(key types.NamespacedName, pod *podInfo) {
	old := c.objs.setPod(key, pod)
	if old != nil && old != pod {
		c.dropPodMemo(old)
	}
	c.markPod(key)
	if pod != nil && !c.primed && c.namespaceSelected(key.Namespace) {
		// While the initial lists arrive, nothing is converted until all
		// are in (flushLocked), and that flush then runs alone. The
		// pod's workload depends on the pod, its node and the network
		// only, so it is computed now, alongside the other informers'
		// lists, and memoized (podWorkload); should its node or the
		// network arrive later, the flush computes it again. (Pods of
		// namespaces not known yet to be selected are left to the flush.)
		_, _ = c.podWorkload(pod)
	}
	c.markDependents(dep{kind: depPod, name: key})
	for _, p := range [...]*podInfo{old, pod} {
		if p != nil {
			for _, a := range p.addrs {
				c.markDependents(dep{kind: depIP, ip: a})
			}
		}
	}
}

// onNode: the workloads of the node's pods, and the services whose
// endpoints took the node's locality.
func (c *Controller) onNode(key types.NamespacedName, node *corev1.Node) {
	name := key.Name
	if old := c.objs.nodes[name]; old != nil && node != nil && maps.Equal(old.Labels, node.Labels) {
		return
	}
	if node == nil {
		delete(c.objs.nodes, name)
	} else {
		c.objs.nodes[name] = node
	}
	for _, pod := range c.objs.podsByNode[name] {
		c.markPod(pod)
	}
	c.markDependents(dep{kind: depNode, name: types.NamespacedName{Name: name}})
}

// onNamespace: when the namespace's selection changes, every object of
// the namespace; when the system namespace's network label changes (and
// Options.Network is unset), everything. Both are rare, so these visit
// every service, slice set and pod of the controller.
func (c *Controller) onNamespace(key types.NamespacedName, ns *corev1.Namespace) {
	name := key.Name
	wasSelected := c.namespaceSelected(name)
	if ns == nil {
		delete(c.objs.namespaces, name)
	} else {
		c.objs.namespaces[name] = ns
	}
	if name == c.opts.SystemNamespace && c.opts.Network == "" {
		var network model.NetworkID
		if ns != nil {
			network = model.NetworkID(ns.Labels[labelNetwork])
		}
		if network != c.net.cluster {
			c.net.cluster = network
			c.markAll("")
			return
		}
	}
	if wasSelected != c.namespaceSelected(name) {
		c.markAll(name)
	}
}

// markAll marks dirty every service, slice owner and pod of a namespace,
// or of every namespace when ns is "".
func (c *Controller) markAll(ns string) {
	for k := range c.objs.services {
		if ns == "" || k.Namespace == ns {
			c.markService(k)
		}
	}
	for k := range c.objs.slices {
		if ns == "" || k.Namespace == ns {
			c.markService(k)
		}
	}
	for k := range c.objs.pods {
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
	ns := c.objs.namespaces[name]
	return ns != nil && c.nsSel.Matches(labels.Set(ns.Labels))
}
