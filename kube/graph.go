package kube

import (
	"net/netip"
	"slices"

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
// cur names; either may be nil. The endpoints both list alike at their
// start and at their end keep their entries, so that a slice scaled by
// one endpoint moves that endpoint's entries, not the slice's.
func (g *graph) replaceSlice(key types.NamespacedName, old, cur *sliceInfo) {
	var olds, curs []sliceEndpointInfo
	if old != nil {
		olds = old.endpoints
	}
	if cur != nil {
		curs = cur.endpoints
	}
	for len(olds) > 0 && len(curs) > 0 && sameReference(&olds[0], &curs[0]) {
		olds, curs = olds[1:], curs[1:]
	}
	for len(olds) > 0 && len(curs) > 0 && sameReference(&olds[len(olds)-1], &curs[len(curs)-1]) {
		olds, curs = olds[:len(olds)-1], curs[:len(curs)-1]
	}
	for i := range olds {
		e := &olds[i]
		if e.pod.Name != "" {
			removeFromList(g.byPod, e.pod, key)
			continue
		}
		for _, a := range e.addrs {
			removeFromIPList(&g.byIP, a, key)
		}
	}
	for i := range curs {
		e := &curs[i]
		if e.pod.Name != "" {
			appendToList(g.byPod, e.pod, key)
			continue
		}
		for _, a := range e.addrs {
			appendToIPList(&g.byIP, a, key)
		}
	}
}

// sameReference reports whether two slice endpoints have the same
// entries: they name the same pod or, naming none, list the same
// addresses in the same order.
func sameReference(o, n *sliceEndpointInfo) bool {
	return o.pod == n.pod && (n.pod.Name != "" || slices.Equal(o.addrs, n.addrs))
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
