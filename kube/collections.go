package kube

import (
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/internal/ipmap"
)

// set is a set of comparable values.
type set[K comparable] map[K]struct{}

func addTo[K, V comparable](m map[K]set[V], k K, v V) {
	s := m[k]
	if s == nil {
		s = set[V]{}
		m[k] = s
	}
	s[v] = struct{}{}
}

func removeFrom[K, V comparable](m map[K]set[V], k K, v V) {
	if s := m[k]; s != nil {
		delete(s, v)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

// appendToIPList and removeFromIPList are appendToList and
// removeFromList for an index by IP.
func appendToIPList[V comparable](m *ipmap.Map[list[V]], ip netip.Addr, v V) {
	m.Set(ip, append(m.Get(ip), v))
}

func removeFromIPList[V comparable](m *ipmap.Map[list[V]], ip netip.Addr, v V) {
	switch l, changed := m.Get(ip).remove(v); {
	case !changed:
	case len(l) == 0:
		m.Delete(ip)
	default:
		m.Set(ip, l)
	}
}

// list is a small set kept as a slice, for the index entries that hold
// one value or a few (the pods of an IP, the services computed from a
// pod) or a bounded number (the pods of a node: the kubelet's maxPods,
// 110 by default): a map per entry costs several times the memory and
// allocations. Adding appends (its callers know the value absent: see
// appendToList); removing is linear in the entry's size. Order carries
// no meaning.
type list[V comparable] []V

// remove returns l without v, and whether v was there. It works in
// place: no caller holds a list across a change of its index.
func (l list[V]) remove(v V) (list[V], bool) {
	i := slices.Index(l, v)
	if i < 0 {
		return l, false
	}
	l[i] = l[len(l)-1]
	return l[:len(l)-1], true
}

// appendToList adds v to the list of k, which the caller knows lacks it:
// no search of the list.
func appendToList[K, V comparable](m map[K]list[V], k K, v V) {
	m[k] = append(m[k], v)
}

func removeFromList[K, V comparable](m map[K]list[V], k K, v V) {
	switch l, changed := m[k].remove(v); {
	case !changed:
	case len(l) == 0:
		delete(m, k)
	default:
		m[k] = l
	}
}
