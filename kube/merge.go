package kube

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// mergedEndpoint is one workload's endpoint, merged from all the
// EndpointSlices of a service: the claim of its address in a slice, and
// for a dual-stack pod whose addresses the slices of both families list,
// the claim of its other address (s6 nil otherwise). It refers to the
// slices' own immutable memory.
type mergedEndpoint struct {
	s     *sliceInfo
	s6    *sliceInfo
	c, c6 int32 // indexes in s.claims, s6.claims
}

// addr returns the endpoint's address in its slice (its IPv4 for a
// dual-stack pod): what mergeSlices orders by.
func (m *mergedEndpoint) addr() netip.Addr { return m.s.claims[m.c].addr }

// ep returns the slice endpoint of the primary claim.
func (m *mergedEndpoint) ep() *sliceEndpointInfo { return &m.s.endpoints[m.s.claims[m.c].ep] }

// endpoint returns the merged endpoint as a sliceEndpoint.
func (m *mergedEndpoint) endpoint() sliceEndpoint {
	e := m.ep()
	se := sliceEndpoint{addresses: m.s.address(m.s.claims[m.c]), pod: e.pod, nodeName: e.nodeName,
		conditions: e.conditions, hints: e.hints, ports: m.s.ports, slice: m.s.name}
	if m.s6 != nil {
		se.addresses = []netip.Addr{se.addresses[0], m.s6.claims[m.c6].addr}
	}
	return se
}

// sameAs reports whether two merged endpoints have the same inputs: the
// same claims, or claims whose slices' endpoints, ports and names are
// equal (a slice replaced by a version that changed other endpoints).
func (m *mergedEndpoint) sameAs(o *mergedEndpoint) bool {
	if *m == *o {
		return true
	}
	if (m.s6 == nil) != (o.s6 == nil) || !sameClaim(m.s, m.c, o.s, o.c) {
		return false
	}
	return m.s6 == nil || sameClaim(m.s6, m.c6, o.s6, o.c6)
}

// sameClaim reports whether two claims have equal addresses, endpoints
// (but for their other addresses), ports and slice names.
func sameClaim(a *sliceInfo, ac int32, b *sliceInfo, bc int32) bool {
	ca, cb := a.claims[ac], b.claims[bc]
	if ca.addr != cb.addr || a.name != b.name {
		return false
	}
	ea, eb := &a.endpoints[ca.ep], &b.endpoints[cb.ep]
	return ea.pod == eb.pod && ea.nodeName == eb.nodeName && ea.conditions == eb.conditions &&
		ea.hints.Equals(eb.hints) && (a == b || slices.Equal(a.ports, b.ports))
}

// sliceEndpoint is a merged endpoint's fields: what its endpoints are
// built from.
type sliceEndpoint struct {
	// addresses are the endpoint's IPs, IPv4 first, at most one per
	// family for a pod.
	addresses []netip.Addr
	// pod is the targetRef pod; zero when the endpoint has no Pod
	// targetRef.
	pod types.NamespacedName
	// nodeName is the slice endpoint's nodeName.
	nodeName string
	// conditions are the slice endpoint's conditions.
	conditions conditions
	// hints are the slice endpoint's topology hints.
	hints *model.Hints
	// ports are the slice's port numbers by name.
	ports portNumbers
	// slice names the slice the primary address comes from.
	slice string
}

// hasPod reports whether the endpoint names a Pod targetRef.
func (e *sliceEndpoint) hasPod() bool { return e.pod.Name != "" }

// compareSliceAge orders slices oldest first: by creation time, then by
// name. When two slices hold the same address, the later one in this
// order (the newest) wins.
func compareSliceAge(a, b *sliceInfo) int {
	if c := a.created.Time.Compare(b.created.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// mergeSlices turns the EndpointSlices of one service into one
// sliceEndpoint per workload, sorted by primary address. The result is a
// function of the slices alone, never of the order they are given in:
//
//   - an address listed by several slices is taken from the newest slice
//     (compareSliceAge), so an endpoint moving between slices is counted
//     once; an address a slice lists twice is taken from its first
//     listing, as in Istio (see sliceClaims);
//   - in a service with slices of both families, addresses whose
//     endpoints name the same Pod targetRef are merged into one
//     sliceEndpoint, keeping per family the address of the newest slice
//     (ties: the lowest address); an endpoint without a Pod targetRef
//     stays one sliceEndpoint per address;
//   - the conditions, node, ports and slice of a merged endpoint are those
//     of its primary (IPv4 if any) address;
//   - FQDN (or unknown) address types, out-of-range ports, malformed
//     addresses and targetRefs into other namespaces are reported as
//     diagnostics (kind EndpointSlice).
//
// The result is valid until m's next merge.
func (m *sliceMerger) merge(in []*sliceInfo, cluster model.ClusterID) ([]mergedEndpoint, []model.Diagnostic) {
	var diags []model.Diagnostic
	report := func(s *sliceInfo, format string, args ...any) {
		diags = append(diags, model.Diagnostic{
			Severity: model.Warning, Kind: "EndpointSlice", Namespace: s.namespace, Name: s.name,
			Cluster: cluster, Message: fmt.Sprintf(format, args...),
		})
	}
	sorted := append(m.sorted[:0], in...)
	slices.SortFunc(sorted, compareSliceAge)
	m.heap = m.heap[:0]
	families := 0
	for age, s := range sorted {
		switch s.addressType {
		case discoveryv1.AddressTypeIPv4:
			families |= 1
		case discoveryv1.AddressTypeIPv6:
			families |= 2
		default:
			report(s, "address type %q is not supported; its %d endpoints are ignored", s.addressType, len(s.endpoints))
			continue
		}
		for _, p := range s.badPorts {
			report(s, "port %q: number %d out of range 1-65535; its endpoints are not served on it", p.name, p.port)
		}
		for _, raw := range s.badAddrs {
			report(s, "malformed address %q ignored", raw)
		}
		for _, r := range s.foreignRefs {
			report(s, "endpoint %s: targetRef names Pod %s of another namespace; the endpoint is used as naming no pod: a slice takes no identity from another namespace", r.addr, r.pod)
		}
		if len(s.claims) > 0 {
			m.heap = append(m.heap, mergeCursor{age: age, s: s})
		}
	}
	out, ages := m.out[:0], m.ages[:0]
	emit := func(c *mergeCursor) {
		out = append(out, mergedEndpoint{s: c.s, c: int32(c.i)})
		ages = append(ages, c.age)
	}
	if len(m.heap) == 1 {
		// One slice: its claims are the merge.
		c := &m.heap[0]
		for c.i = range c.s.claims {
			emit(c)
		}
	} else {
		// A k-way merge of the slices' sorted claims; of the claims of
		// one address the newest slice's comes first, and is taken.
		h := mergeHeap(m.heap)
		h.init()
		var last netip.Addr
		for len(h) > 0 {
			c := &h[0]
			if a := c.s.claims[c.i].addr; len(out) == 0 || a != last {
				emit(c)
				last = a
			}
			if c.i++; c.i == len(c.s.claims) {
				h[0] = h[len(h)-1]
				h = h[:len(h)-1]
			}
			h.down(0)
		}
	}
	if families == 3 {
		out = joinFamilies(out, ages, &m.byPod)
	}
	clear(sorted)
	clear(m.heap)
	m.sorted, m.out, m.ages = sorted[:0], out, ages[:0]
	return out, diags
}

// sliceMerger holds the buffers of mergeSlices from one merge to the
// next, so that a merge allocates little in the steady state. The zero
// value is ready to use; a sliceMerger is not safe for concurrent use.
type sliceMerger struct {
	sorted []*sliceInfo
	heap   []mergeCursor
	out    []mergedEndpoint
	ages   []int
	byPod  map[types.NamespacedName]int
}

// mergeSlices is merge with buffers of its own, its result as
// sliceEndpoints.
func mergeSlices(in []*sliceInfo, cluster model.ClusterID) ([]sliceEndpoint, []model.Diagnostic) {
	var m sliceMerger
	merged, diags := m.merge(in, cluster)
	out := make([]sliceEndpoint, len(merged))
	for i := range merged {
		out[i] = merged[i].endpoint()
	}
	return out, diags
}

// mergeCursor is a slice being merged: its claims from i on.
type mergeCursor struct {
	age int // the slice's place, oldest first
	s   *sliceInfo
	i   int
}

// mergeHeap orders cursors by their next address, then newest slice
// first.
type mergeHeap []mergeCursor

func (h mergeHeap) less(i, j int) bool {
	a, b := h[i].s.claims[h[i].i].addr, h[j].s.claims[h[j].i].addr
	if c := a.Compare(b); c != 0 {
		return c < 0
	}
	return h[i].age > h[j].age
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// joinFamilies merges the IPv4 and IPv6 endpoints of one pod (one
// targetRef) into one, as mergeSlices describes, and returns the result
// in address order (of the IPv4 claim, for a joined endpoint). ages are
// the endpoints' slices' places.
func joinFamilies(eps []mergedEndpoint, ages []int, byPod *map[types.NamespacedName]int) []mergedEndpoint {
	if *byPod == nil {
		*byPod = map[types.NamespacedName]int{}
	}
	m := *byPod
	defer clear(m)
	type best struct{ v4, v6 int } // indexes in eps, -1 for none
	var groups []best
	for i := range eps {
		pod := eps[i].ep().pod
		if pod.Name == "" {
			continue
		}
		gi, ok := m[pod]
		if !ok {
			gi = len(groups)
			m[pod] = gi
			groups = append(groups, best{-1, -1})
		}
		g := &groups[gi]
		at := &g.v6
		if eps[i].addr().Is4() {
			at = &g.v4
		}
		// Addresses come in ascending order, so on an age tie the lowest
		// is kept.
		if *at < 0 || ages[i] > ages[*at] {
			*at = i
		}
	}
	keep := make([]bool, len(eps))
	for i := range eps {
		keep[i] = eps[i].ep().pod.Name == ""
	}
	for _, g := range groups {
		switch {
		case g.v4 >= 0 && g.v6 >= 0:
			e := &eps[g.v4]
			e.s6, e.c6 = eps[g.v6].s, eps[g.v6].c
			keep[g.v4] = true
		case g.v4 >= 0:
			keep[g.v4] = true
		default:
			keep[g.v6] = true
		}
	}
	out := eps[:0]
	for i := range eps {
		if keep[i] {
			out = append(out, eps[i])
		}
	}
	return out
}
