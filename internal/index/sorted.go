package index

import (
	"slices"

	"github.com/meshreg/meshreg/model"
)

// SortEndpoints sorts eps in place by model.CompareEndpoints, unless it is
// in order already, given prev, the sorted list eps replaces (nil for
// none). A list in order is never written to, so that a registry's
// published list can be passed on without a copy; and a list that keeps
// most of prev's endpoints (a few replaced, added or removed, as
// registries publish their changes) is told in order mostly from pointer
// comparisons, without reading the endpoints that stayed.
func SortEndpoints(prev, eps []*model.Endpoint) {
	if !replacesInPlace(prev, eps) && !sortedAfter(prev, eps) {
		slices.SortFunc(eps, model.CompareEndpoints)
	}
}

// replacesInPlace reports whether eps is prev (a sorted list) with some
// endpoints replaced by ones that sort the same: eps is then sorted too,
// which this tells without reading the endpoints that stayed. A change
// to a few endpoints of a long list (a pod's labels, a readiness flip)
// comes as such a list, and the endpoints left alone are not read.
func replacesInPlace(prev, eps []*model.Endpoint) bool {
	if len(prev) != len(eps) || len(eps) == 0 {
		return false
	}
	for i, ep := range eps {
		if ep != prev[i] && (ep == nil || model.CompareEndpoints(prev[i], ep) != 0) {
			return false
		}
	}
	return true
}

// sortedAfter reports whether eps is sorted (model.CompareEndpoints),
// given that prev is: two neighbours of eps that prev holds in the same
// order (see Trail) are in order without being read. Only the pairs with
// an endpoint that prev does not hold there are compared, so a long list
// that lost or gained a few endpoints (a slice's scale-up, a
// recomputation that kept most endpoints) is checked in pointer
// comparisons.
func sortedAfter(prev, eps []*model.Endpoint) bool {
	t := NewTrail(prev)
	prevHeld := false // eps[i-1] is prev's
	for i, ep := range eps {
		held := t.Holds(i, ep)
		if i > 0 && !(held && prevHeld) && model.CompareEndpoints(eps[i-1], ep) > 0 {
			return false
		}
		prevHeld = held
	}
	return true
}

// A Trail follows a new list of endpoints along the list it replaces, to
// tell which of its endpoints are the old list's without reading any:
// Holds, called for each endpoint of the new list in order, reports
// whether the old list holds that very endpoint (the same pointer) at the
// same index, or at most trailWindow places after the last one it held.
// The places of the endpoints held grow with their index in the new list,
// so that two held endpoints are in the old list's order. A list that
// keeps most of its predecessor's endpoints (a few replaced, added or
// removed) is so followed in pointer comparisons; after a run of more than
// trailWindow new endpoints at other places, the rest of the list counts
// as new. The zero Trail holds nothing.
type Trail struct {
	prev []*model.Endpoint
	last int // where in prev the last endpoint held is; -1 before any
}

// trailWindow is how far past the last endpoint held a Trail looks.
const trailWindow = 4

// NewTrail returns a Trail along prev.
func NewTrail(prev []*model.Endpoint) Trail { return Trail{prev: prev, last: -1} }

// Holds reports whether prev holds ep, the new list's endpoint at index
// i, where the Trail looks (see Trail).
func (t *Trail) Holds(i int, ep *model.Endpoint) bool {
	if i > t.last && i < len(t.prev) && t.prev[i] == ep {
		t.last = i
		return true
	}
	return t.near(ep)
}

// near is Holds past the same index: the window after the last endpoint
// held. Apart, so that Holds's usual case is inlined.
func (t *Trail) near(ep *model.Endpoint) bool {
	for k := t.last + 1; k < len(t.prev) && k <= t.last+trailWindow; k++ {
		if t.prev[k] == ep {
			t.last = k
			return true
		}
	}
	return false
}

// MergeEndpoints returns the sorted union of sorted lists
// (model.CompareEndpoints), merged in one pass without sorting: nil for
// none, the list itself for one. Endpoints that compare equal keep the
// order of their lists. The lists are not written to.
func MergeEndpoints(lists [][]*model.Endpoint) []*model.Endpoint {
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]*model.Endpoint, 0, n)
	heads := make([]int, len(lists))
	for len(out) < n {
		best := -1
		for i, l := range lists {
			if heads[i] == len(l) {
				continue
			}
			if best < 0 || model.CompareEndpoints(l[heads[i]], lists[best][heads[best]]) < 0 {
				best = i
			}
		}
		out = append(out, lists[best][heads[best]])
		heads[best]++
	}
	return out
}
