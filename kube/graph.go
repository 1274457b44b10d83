package kube

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/internal/ipmap"
)

// graph finds the slices whose endpoints take their metadata from a pod:
// the slices whose endpoints name the pod in a targetRef, and the slices
// with an endpoint at one of the pod's IPs that names no pod (which a
// pod lending its metadata by IP backs, see podLendsByIP). It is a
// function of the slices alone, kept as they change; with the slices'
// owners and the pods' nodes it answers what a pod's or a node's change
// affects. Lists are multisets: a slice naming a pod twice is listed
// twice, and removed as often.
type graph struct {
	byPod map[types.NamespacedName]list[types.NamespacedName]
	byIP  ipmap.Map[list[types.NamespacedName]]
}

func newGraph() graph {
	return graph{byPod: map[types.NamespacedName]list[types.NamespacedName]{}}
}

// replaceSlice moves the slice key's entries from what old names to what
// cur names; either may be nil.
func (g *graph) replaceSlice(key types.NamespacedName, old, cur *sliceInfo) {
	if old != nil && cur != nil && sameReferences(old, cur) {
		return // a change of conditions, say: the same pods and addresses
	}
	if old != nil {
		for i := range old.endpoints {
			e := &old.endpoints[i]
			if e.pod.Name != "" {
				removeFromList(g.byPod, e.pod, key)
				continue
			}
			for _, a := range e.addrs {
				removeFromIPList(&g.byIP, a, key)
			}
		}
	}
	if cur != nil {
		for i := range cur.endpoints {
			e := &cur.endpoints[i]
			if e.pod.Name != "" {
				appendToList(g.byPod, e.pod, key)
				continue
			}
			for _, a := range e.addrs {
				appendToIPList(&g.byIP, a, key)
			}
		}
	}
}

// sameReferences reports whether two slices' endpoints name the same
// pods, and list the same addresses where they name none, in the same
// order.
func sameReferences(old, cur *sliceInfo) bool {
	if len(old.endpoints) != len(cur.endpoints) {
		return false
	}
	for i := range cur.endpoints {
		o, n := &old.endpoints[i], &cur.endpoints[i]
		if o.pod != n.pod || (n.pod.Name == "" && !equalAddrs(o.addrs, n.addrs)) {
			return false
		}
	}
	return true
}

func equalAddrs(a, b []netip.Addr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// slicesOf calls f with each slice that names the pod or, naming no pod,
// lists one of addrs: the slices a pod with those IPs may back.
func (g *graph) slicesOf(pod types.NamespacedName, addrs []netip.Addr, f func(slice types.NamespacedName)) {
	for _, s := range g.byPod[pod] {
		f(s)
	}
	for _, a := range addrs {
		for _, s := range g.byIP.Get(a) {
			f(s)
		}
	}
}
