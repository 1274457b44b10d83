package kube

import (
	"cmp"
	"fmt"
	"iter"
	"net/netip"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// sliceEndpoint is one workload's endpoint, gathered from all the
// EndpointSlices of a service: the addresses of a dual-stack pod from its
// IPv4 and IPv6 slices are merged into one sliceEndpoint.
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
	// ports are the slice's port numbers by name.
	ports portNumbers
	// slice names the slice the primary address comes from.
	slice string
}

// hasPod reports whether the endpoint names a Pod targetRef.
func (e *sliceEndpoint) hasPod() bool { return e.pod.Name != "" }

// sliceServiceName returns the name of the service a slice belongs to
// (its kubernetes.io/service-name label), or "" for a slice that belongs
// to none.
func sliceServiceName(s *sliceInfo) string { return s.service }

// compareSliceAge orders slices oldest first: by creation time, then by
// name. When two slices hold the same address, the later one in this
// order (the newest) wins.
func compareSliceAge(a, b *sliceInfo) int {
	if c := a.created.Time.Compare(b.created.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// addressClaim is the newest slice endpoint holding an address.
type addressClaim struct {
	age   int // index of the slice, oldest first
	slice *sliceInfo
	ep    *sliceEndpointInfo
}

// mergeSlices turns the EndpointSlices of one service into one
// sliceEndpoint per workload, sorted by primary address. The result is a
// function of the slices alone, never of the order they are given in:
//
//   - an address listed by several slices is taken from the newest slice
//     (compareSliceAge), so an endpoint moving between slices is counted
//     once; an address a slice lists twice is taken from its first
//     listing, as in Istio;
//   - addresses whose endpoints name the same Pod targetRef are merged
//     into one sliceEndpoint, keeping per family the address of the
//     newest slice (ties: the lowest address); an endpoint without a Pod
//     targetRef stays one sliceEndpoint per address;
//   - the conditions, node, ports and slice of a merged endpoint are those
//     of its primary (IPv4 if any) address;
//   - FQDN (or unknown) address types and malformed addresses are
//     reported as diagnostics (kind EndpointSlice) and skipped.
func mergeSlices(in []*sliceInfo, cluster model.ClusterID) ([]sliceEndpoint, []model.Diagnostic) {
	var m sliceMerger
	out, diags, _ := m.merge(slices.Values(in), cluster)
	return out, diags
}

// sliceMerger computes mergeSlices with buffers kept from one call to the
// next, so that merging a service's slices allocates nothing in the
// steady state. Its results are valid until the next call. The zero
// value is ready to use; a sliceMerger is not safe for concurrent use.
type sliceMerger struct {
	sorted []*sliceInfo
	claims map[netip.Addr]addressClaim
	addrs  []netip.Addr
	groups []mergeGroup
	pods   []types.NamespacedName
	byPod  map[types.NamespacedName]int
	// backing holds the results' addresses: they are read while the
	// service's endpoints are computed and never kept (sliceEndpoints
	// copies them or takes the pod's).
	backing []netip.Addr
	out     []sliceEndpoint
}

// mergeGroup is the addresses of one workload, per family with the
// claim that won it.
type mergeGroup struct {
	v4, v6 netip.Addr
	c4, c6 addressClaim
}

// maxKeptMergeMap is the number of addresses above which a merge's maps
// are not kept for the next one: clearing a Go map costs its capacity,
// and a Go map never shrinks, so one large service would otherwise slow
// every later merge.
const maxKeptMergeMap = 1024

// merge is mergeSlices(in, cluster); the result shares memory with m.
// oneToOne reports whether every address read became a sliceEndpoint of
// its own: no address was listed twice and no pod's addresses were
// joined. Each slice endpoint (of one address) is then one
// sliceEndpoint, with that endpoint's conditions, node and ports.
func (m *sliceMerger) merge(in iter.Seq[*sliceInfo], cluster model.ClusterID) (out []sliceEndpoint, diags []model.Diagnostic, oneToOne bool) {
	report := func(s *sliceInfo, format string, args ...any) {
		diags = append(diags, model.Diagnostic{
			Severity: model.Warning, Kind: "EndpointSlice", Namespace: s.namespace, Name: s.name,
			Cluster: cluster, Message: fmt.Sprintf(format, args...),
		})
	}
	sorted := slices.AppendSeq(m.sorted[:0], in)
	slices.SortFunc(sorted, compareSliceAge)
	n := 0
	for _, s := range sorted {
		for i := range s.endpoints {
			n += len(s.endpoints[i].addrs)
		}
	}
	keep := n <= maxKeptMergeMap
	claims, byPod := m.claims, m.byPod
	if !keep || claims == nil {
		claims = make(map[netip.Addr]addressClaim, n)
		byPod = make(map[types.NamespacedName]int, n)
	}
	for age, s := range sorted {
		switch s.addressType {
		case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
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
		for i := range s.endpoints {
			ep := &s.endpoints[i]
			for _, a := range ep.addrs {
				if c, ok := claims[a]; ok && c.slice == s {
					continue // listed twice in one slice: the first listing wins
				}
				claims[a] = addressClaim{age: age, slice: s, ep: ep}
			}
		}
	}

	// Group the winning claims by workload. Groups are values in one
	// array, found by index: a service's merge allocates a few arrays,
	// not an object per endpoint.
	addrs := m.addrs[:0]
	for a := range claims {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	groups, pods := m.groups[:0], m.pods[:0]
	for _, a := range addrs {
		c := claims[a]
		gi := -1
		if key := c.ep.pod; key.Name != "" {
			if i, ok := byPod[key]; ok {
				gi = i
			} else {
				byPod[key] = len(groups)
			}
		}
		if gi < 0 {
			gi = len(groups)
			groups = append(groups, mergeGroup{})
			pods = append(pods, c.ep.pod)
		}
		g := &groups[gi]
		// Addresses arrive in ascending order, so on an age tie the
		// lowest address is kept.
		if a.Is4() {
			if !g.v4.IsValid() || c.age > g.c4.age {
				g.v4, g.c4 = a, c
			}
		} else if !g.v6.IsValid() || c.age > g.c6.age {
			g.v6, g.c6 = a, c
		}
	}

	backing := m.backing[:0]
	out = m.out[:0]
	if need := 2 * len(groups); cap(backing) < need {
		// Grown once to size: results point into it, so it must not
		// move while they are built.
		backing = make([]netip.Addr, 0, need)
	}
	for gi := range groups {
		g := &groups[gi]
		var se sliceEndpoint
		primary := g.c6
		start := len(backing)
		if g.v4.IsValid() {
			primary = g.c4
			backing = append(backing, g.v4)
		}
		if g.v6.IsValid() {
			backing = append(backing, g.v6)
		}
		se.addresses = backing[start:len(backing):len(backing)]
		se.pod = pods[gi]
		se.nodeName = primary.ep.nodeName
		se.conditions = primary.ep.conditions
		se.ports = primary.slice.ports
		se.slice = primary.slice.name
		out = append(out, se)
	}
	slices.SortFunc(out, func(a, b sliceEndpoint) int { return a.addresses[0].Compare(b.addresses[0]) })

	// Keep the buffers for the next merge, emptied of this one's
	// pointers (they would keep deleted slices alive), unless they grew
	// past what is worth keeping. The results are the caller's until the
	// next merge.
	oneToOne = len(out) == n
	if !keep {
		*m = sliceMerger{}
		return out, diags, oneToOne
	}
	clear(claims)
	clear(byPod)
	clear(sorted)
	clear(groups)
	clear(pods)
	if len(m.out) > len(out) {
		clear(m.out[len(out):]) // the previous results beyond these
	}
	m.claims, m.byPod = claims, byPod
	m.sorted, m.addrs, m.groups, m.pods, m.backing, m.out = sorted[:0], addrs[:0], groups[:0], pods[:0], backing[:0], out
	return out, diags, oneToOne
}

// appendSliceEndpoints appends to eps the endpoints of one sliceEndpoint,
// one per service port the slice serves (a slice port of the same name),
// sharing meta's labels. meta carries the workload's metadata; its ports
// and health state are replaced, and its addresses too unless they are the
// slice endpoint's (the usual case: meta's are then the pod's, kept
// immutable). An endpoint equal to one that r holds, the service's current
// list, is taken from it (see endpointReuser); r may be nil.
func appendSliceEndpoints(eps []*model.Endpoint, svc *model.Service, se *sliceEndpoint, meta *model.Endpoint, st endpointState, r *endpointReuser) []*model.Endpoint {
	var addrs []netip.Addr // se.addresses in an array of their own, once needed
	// A pod's addresses, when the slices list them, in the pod's order
	// (primary first; IPv6 first in an IPv6-primary cluster).
	own := sameAddresses(meta.Addresses, se.addresses)
	for k, p := range svc.Ports {
		num, ok := se.ports.get(p.Name)
		if !ok {
			continue
		}
		ep := *meta
		if !own {
			// se.addresses share an array with the other results of the
			// merge: compare with them, keep a copy.
			ep.Addresses = se.addresses
		}
		ep.Hostname = ""
		ep.Port = num
		ep.ServicePortName = p.Name
		ep.Health, ep.Serving = st.health, st.serving
		if old := r.find(k, &ep); old != nil {
			eps = append(eps, old)
			continue
		}
		if !own {
			if addrs == nil {
				addrs = slices.Clone(se.addresses)
			}
			ep.Addresses = addrs
		}
		// A copy: ep itself stays on the stack, so a reused endpoint
		// costs no allocation.
		out := new(model.Endpoint)
		*out = ep
		eps = append(eps, out)
	}
	return eps
}

// sameAddresses reports whether a and b hold the same addresses, in any
// order. Both hold at most one address per family.
func sameAddresses(a, b []netip.Addr) bool {
	switch {
	case len(a) != len(b):
		return false
	case len(a) == 2 && a[0] == b[1] && a[1] == b[0]:
		return true
	}
	return slices.Equal(a, b)
}

// endpointReuser finds recomputed endpoints among the published ones of
// a service. Reusing the published value for an endpoint that did not
// change keeps its identity across recomputations: nothing new is
// allocated for it, and the store re-indexes only the endpoints whose
// pointers changed.
//
// The published list is sorted by model.CompareEndpoints, by service port
// name first, then by primary address. serviceEndpoints looks up each
// service port's endpoints in ascending address order, so the reuser
// keeps a cursor per port and a service's lookups walk the list about
// once, instead of a binary search each.
type endpointReuser struct {
	prev []*model.Endpoint
	// at holds, per service port (by index), where the last lookup for
	// it ended; -1 before the first.
	at []int
}

// reset prepares r for a service with nports ports whose published list
// is prev; it keeps r's memory.
func (r *endpointReuser) reset(prev []*model.Endpoint, nports int) {
	r.prev = prev
	r.at = r.at[:0]
	for range nports {
		r.at = append(r.at, -1)
	}
}

// find returns the published endpoint equal to ep, which serves service
// port k, or nil. With k < 0 it keeps no cursor (lookups in no
// particular order). r may be nil: then it finds nothing.
func (r *endpointReuser) find(k int, ep *model.Endpoint) *model.Endpoint {
	if r == nil || len(r.prev) == 0 {
		return nil
	}
	prev := r.prev
	cursor := k >= 0 && k < len(r.at)
	i := -1
	if cursor {
		i = r.at[k]
	}
	if i < 0 || (i > 0 && model.CompareEndpoints(prev[i-1], ep) >= 0) {
		i = searchEndpoints(prev, ep) // the port's first lookup, or one out of order
	} else {
		for i < len(prev) && model.CompareEndpoints(prev[i], ep) < 0 {
			i++
		}
	}
	if cursor {
		r.at[k] = i
	}
	for ; i < len(prev) && model.CompareEndpoints(prev[i], ep) == 0; i++ {
		if prev[i].Equals(ep) {
			return prev[i]
		}
	}
	return nil
}

// searchEndpoints returns the index of the first endpoint of eps (sorted
// by model.CompareEndpoints) that does not sort before ep. A binary
// search by hand: through slices.BinarySearchFunc's function value ep
// would escape, and a lookup would allocate the endpoint looked up.
func searchEndpoints(eps []*model.Endpoint, ep *model.Endpoint) int {
	lo, hi := 0, len(eps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if model.CompareEndpoints(eps[m], ep) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
