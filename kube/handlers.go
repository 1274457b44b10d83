package kube

import (
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
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
	// patches holds, per service, pods whose metadata changed while
	// everything that decides which of the service's endpoints they back
	// did not (see onPod): the next flush rewrites those endpoints only,
	// unless the service is in services.
	patches map[types.NamespacedName][]types.NamespacedName
	// slices holds, per service, a change of one of its slices that
	// its endpoints can be patched for (see onSlice): the next flush
	// patches those endpoints only, unless the service is in services.
	slices map[types.NamespacedName]sliceChange
}

func newDirtySet() dirtySet {
	return dirtySet{
		services: set[types.NamespacedName]{}, pods: set[types.NamespacedName]{},
		patches: map[types.NamespacedName][]types.NamespacedName{}, slices: map[types.NamespacedName]sliceChange{},
	}
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
	if len(d.patches) > maxReusedDirty {
		d.patches = map[types.NamespacedName][]types.NamespacedName{}
	} else {
		clear(d.patches)
	}
	if len(d.slices) > maxReusedDirty {
		d.slices = map[types.NamespacedName]sliceChange{}
	} else {
		clear(d.slices)
	}
}

// has reports whether the service is marked for recomputation or a
// slice's patch already: a second change before the flush is then left
// to the full path.
func (d *dirtySet) has(svc types.NamespacedName) bool {
	_, full := d.services[svc]
	_, patched := d.slices[svc]
	return full || patched
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

// markPatch records that the endpoints of svc that pod backs must be
// rewritten with the pod's metadata.
func (c *Controller) markPatch(svc, pod types.NamespacedName) {
	if c.primed && !slices.Contains(c.dirty.patches[svc], pod) {
		c.dirty.patches[svc] = append(c.dirty.patches[svc], pod)
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

// onSlice: the services owning the slice before and after change; or,
// when the slice's change is one its service's endpoints can be patched
// for (see sliceChangeOf), that change. Each of the service's addresses
// must be an endpoint of its own (no endpointsShape joined).
func (c *Controller) onSlice(key types.NamespacedName, s *sliceInfo) {
	old := c.objs.slice(key)
	touched := c.objs.setSlice(key, s)
	if c.primed && len(touched) == 1 && c.objs.shapes[touched[0]]&joined == 0 && !c.dirty.has(touched[0]) {
		if ch, ok := sliceChangeOf(old, s); ok {
			c.dirty.slices[touched[0]] = ch
			return
		}
	}
	for _, svc := range touched {
		c.markService(svc)
	}
}

// sliceChange is a slice added (old nil), removed (cur nil), or replaced
// by one that differs in which endpoints it lists (each of one address,
// matched by address) and in their conditions only.
type sliceChange struct {
	old, cur *sliceInfo
	// gone indexes old's endpoints whose addresses cur lacks, ascending;
	// added indexes cur's endpoints whose addresses old lacks, ascending;
	// changed indexes cur's other endpoints whose conditions changed.
	gone, added, changed []int
	// aligned is set when old and cur list the same addresses at the
	// same indexes (conditionsOnly): the endpoints whose conditions
	// changed are then found by comparing the two index by index, and
	// not listed in changed, which would cost the most common change of
	// all an allocation.
	aligned bool
}

// sliceChangeOf returns the change from old to cur when its service's
// endpoints can be patched for it: a change of the endpoints' conditions
// alone (see conditionsOnly), or of which endpoints the slice lists (see
// membersOnly). The first, a readiness flip, is the most common change
// of all, and conditionsOnly tells it by comparing the two slices index
// by index, where membersOnly matches their addresses through a map.
func sliceChangeOf(old, cur *sliceInfo) (sliceChange, bool) {
	if conditionsOnly(old, cur) {
		return sliceChange{old: old, cur: cur, aligned: true}, true
	}
	return membersOnly(old, cur)
}

// conditionsOnly reports whether cur differs from old in its endpoints'
// conditions alone, each endpoint having one address. When the last
// merge of the service's slices made one endpoint of each address (no
// endpointsShape joined), and only such a change happened since, merging
// them again pairs each slice endpoint with the same endpoint as before,
// and the service's endpoints differ only in the health of the endpoints
// whose conditions changed.
func conditionsOnly(old, cur *sliceInfo) bool {
	if old == nil || cur == nil || old.service != cur.service || old.addressType != cur.addressType ||
		!old.created.Equal(&cur.created) || len(old.endpoints) != len(cur.endpoints) ||
		!slices.Equal(old.ports, cur.ports) || !sameDiagnostics(old, cur) {
		return false
	}
	switch cur.addressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
	default:
		return false
	}
	for i := range cur.endpoints {
		o, n := &old.endpoints[i], &cur.endpoints[i]
		if len(n.addrs) != 1 || !slices.Equal(o.addrs, n.addrs) || o.pod != n.pod || o.nodeName != n.nodeName {
			return false
		}
	}
	return true
}

// maxPatchedMembers is the number of endpoints a slice may gain above
// which its change recomputes the service: each endpoint gained is
// checked against every endpoint of the service's other slices.
const maxPatchedMembers = 16

// membersOnly reports whether cur differs from old in which endpoints it
// lists and in their conditions only, and returns the difference; either
// may be nil (a slice added or removed). Both must be of an IP address
// type with every endpoint of one address, and, unless one is nil, of
// the same service, creation time and ports, with the same malformed
// ports and addresses (so that the service's diagnostics stay as they
// are; a slice added or removed must have none). An address in both must
// name the same pod and node. Whether the endpoints gained are new to the
// service is left to the patch (see Controller.patchSlice), which reads
// the service's other slices.
func membersOnly(old, cur *sliceInfo) (sliceChange, bool) {
	ch := sliceChange{old: old, cur: cur}
	for _, s := range [...]*sliceInfo{old, cur} {
		if s == nil {
			continue
		}
		switch s.addressType {
		case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		default:
			return ch, false
		}
		if (old == nil || cur == nil) && len(s.badPorts)+len(s.badAddrs)+len(s.foreignRefs) > 0 {
			return ch, false
		}
		for i := range s.endpoints {
			if len(s.endpoints[i].addrs) != 1 {
				return ch, false
			}
		}
	}
	switch {
	case old == nil && cur == nil:
		return ch, false
	case old == nil:
		ch.added = indexes(len(cur.endpoints))
	case cur == nil:
		ch.gone = indexes(len(old.endpoints))
	default:
		if old.service != cur.service || old.addressType != cur.addressType || !old.created.Equal(&cur.created) ||
			!slices.Equal(old.ports, cur.ports) || !sameDiagnostics(old, cur) {
			return ch, false
		}
		at := make(map[netip.Addr]int, len(old.endpoints))
		for i := range old.endpoints {
			at[old.endpoints[i].addrs[0]] = i
		}
		if len(at) != len(old.endpoints) {
			return ch, false // an address listed twice
		}
		for i := range cur.endpoints {
			n := &cur.endpoints[i]
			j, ok := at[n.addrs[0]]
			if !ok {
				ch.added = append(ch.added, i)
				continue
			}
			delete(at, n.addrs[0])
			o := &old.endpoints[j]
			if o.pod != n.pod || o.nodeName != n.nodeName {
				return ch, false
			}
			if o.conditions != n.conditions {
				ch.changed = append(ch.changed, i)
			}
		}
		for _, j := range at {
			ch.gone = append(ch.gone, j)
		}
		slices.Sort(ch.gone)
	}
	return ch, len(ch.added) <= maxPatchedMembers
}

// sameDiagnostics reports whether two versions of a slice give mergeSlices
// the same diagnostics to report.
func sameDiagnostics(old, cur *sliceInfo) bool {
	return slices.Equal(old.badPorts, cur.badPorts) && slices.Equal(old.badAddrs, cur.badAddrs) &&
		slices.Equal(old.foreignRefs, cur.foreignRefs)
}

// indexes returns 0, 1, ..., n-1.
func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// onPod: the pod's workload, and the services whose endpoints named the
// pod or looked up one of its old or new IPs.
func (c *Controller) onPod(key types.NamespacedName, pod *podInfo) {
	old := c.objs.setPod(key, pod)
	if old != nil && old != pod {
		c.dropPodMemo(old)
	}
	c.markPod(key)
	if old != nil && pod != nil && samePlacement(old, pod) {
		// The pod changed but not what decides which endpoints it
		// backs: its name, node, IPs and liveness (which endpoints name
		// it or its IPs, which pod holds an IP, the dependencies on its
		// node).
		// Those endpoints take the new metadata; nothing else of the
		// services changes, so they are patched, not recomputed.
		for _, svc := range c.objs.dependents(dep{kind: depPod, name: key}) {
			c.markPatch(svc, key)
		}
		lends := podLendsByIP(old) != podLendsByIP(pod) // it starts or stops lending by IP
		for _, a := range pod.addrs {
			if lends {
				c.markDependents(dep{kind: depIP, ip: a})
				continue
			}
			for _, svc := range c.objs.dependents(dep{kind: depIP, ip: a}) {
				c.markPatch(svc, key)
			}
		}
		return
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
// or of every namespace when ns is "", and the services whose endpoints
// name those pods or their IPs: a service of another namespace may take
// an endpoint's metadata from a pod of this one (by address).
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
	for k, p := range c.objs.pods {
		if ns == "" || k.Namespace == ns {
			c.markPod(k)
			c.markDependents(dep{kind: depPod, name: k})
			for _, a := range p.addrs {
				c.markDependents(dep{kind: depIP, ip: a})
			}
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
