package kube

import (
	"maps"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// A service's endpoints are computed in stages, one way for the initial
// conversion and for every change:
//
//  1. mergeSlices: the service's slices, one sliceEndpoint per address (a
//     dual-stack pod's two joined);
//  2. per slice endpoint, its metadata: its targetRef pod's (the pod's
//     memoized endpoint, see podEndpoint), a pod's lent by IP, or none;
//     withheld while the targetRef pod is unknown;
//  3. per slice endpoint and service port the slice serves, the model
//     endpoint, with the health its conditions say (endpointHealth);
//  4. the endpoints of the WorkloadEntries the service selects.
//
// Stages 2 and 3 are memoized per slice endpoint (endpointMemo): a slice
// endpoint whose inputs are those of the previous computation (the same
// fields, and a pod that did not change since) keeps its endpoints, the
// very pointers, so a change costs a walk over the service's slice
// endpoints, not their conversion, and consumers may compare pointers to
// skip what did not change.

// endpointMemo is a service's last endpoint computation: its merged
// slice endpoints (in mergeSlices' order), per merged endpoint the pod
// whose metadata its endpoints took (its targetRef pod or the pod that
// lent its metadata by IP; nil for none, and for a pending one), and its
// endpoints, one per service port (nil where it serves none): endpoint i
// of port k at eps[k*len(merged)+i], so that each port's endpoints are
// in one run, in address order; the WorkloadEntries' endpoints follow in
// entries. A memo is valid for the service object it was computed for
// (see svcState), and its computation owns its arrays: a change that
// keeps the number of merged endpoints updates them in place.
type endpointMemo struct {
	merged  []mergedEndpoint
	pods    []*podInfo
	eps     []*model.Endpoint
	entries []*model.Endpoint
	// pending is how many of the endpoints are withheld until their pod
	// is known (each has a pendingDiagnostic).
	pending int
}

// endpointWork is the memory one service's endpoint computation works
// in, kept for the next one. Not safe for concurrent use.
type endpointWork struct {
	merger sliceMerger
	slices []*sliceInfo
	align  []int
	anon   model.Endpoint
	// spare is the arrays of the last memo a computation replaced that
	// did not work in place, cleared, for the next that does not.
	spare endpointMemo
}

// takeSpare returns memo arrays for n merged endpoints and nports ports,
// zeroed: the spare's when they are large enough.
func (w *endpointWork) takeSpare(n, nports int) endpointMemo {
	s := w.spare
	w.spare = endpointMemo{}
	return endpointMemo{merged: sized(s.merged, n), pods: sized(s.pods, n), eps: sized(s.eps, n*nports)}
}

// keepSpare keeps a replaced memo's arrays as the spare, cleared so that
// they hold on to nothing.
func (w *endpointWork) keepSpare(m *endpointMemo) {
	clear(m.merged[:cap(m.merged)])
	clear(m.pods[:cap(m.pods)])
	clear(m.eps[:cap(m.eps)])
	w.spare = endpointMemo{merged: m.merged[:0], pods: m.pods[:0], eps: m.eps[:0]}
}

// sized returns s with length n, or a new slice where s is too short.
// The elements up to s's capacity must be zero.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// endpointEnv is what a computation reads besides the service and its
// slices: the pods, and which of them changed since the memos were
// computed.
type endpointEnv interface {
	// podFor returns the pod whose metadata a slice endpoint of a
	// service of namespace ns takes, and whether the endpoint names a pod
	// that is not known (pending).
	podFor(ns string, se *sliceEndpoint) (pod *podInfo, pending bool)
	// podMeta returns a pod's endpoint metadata (see podEndpoint).
	podMeta(pod *podInfo) *model.Endpoint
	// anonymous returns the metadata of an endpoint no pod backs.
	anonymous(addrs []netip.Addr, nodeName string) model.Endpoint
	// changed reports whether a pod changed since the memos were made;
	// none reports whether no pod did.
	changed(pod types.NamespacedName) bool
	none() bool
	// entries returns the WorkloadEntry instances of a namespace.
	entries(ns string) map[model.WorkloadKey]*model.WorkloadInstance
	// entryReachable reports whether the cluster's clients reach a
	// WorkloadEntry directly.
	entryReachable(we *model.WorkloadInstance) bool
	cluster() model.ClusterID
}

// endpointTraits are what a service's endpoints take from the service
// besides its ports: whether it drains them (see endpointHealth), and
// their discoverability (see endpointDiscoverability), which prev's
// endpoints must have too.
type endpointTraits struct {
	draining bool
	disc     model.Discoverability
}

// serviceEndpoints computes a service's endpoints (see the stages above)
// from its slices (in any order), reusing prev's, and returns them with
// the slices' diagnostics and the memo of this computation, which
// replaces prev: it holds prev's arrays, or w keeps them for a later
// computation.
func serviceEndpoints(ns string, svc *model.Service, tr endpointTraits, slicesIn []*sliceInfo, env endpointEnv, prev *endpointMemo, w *endpointWork) ([]*model.Endpoint, []model.Diagnostic, endpointMemo) {
	if svc.Resolution == model.Alias {
		return nil, nil, endpointMemo{} // ExternalName services have no endpoints
	}
	merged, diags := w.merger.merge(slicesIn, env.cluster())
	n, nports := len(merged), len(svc.Ports)
	if len(prev.eps) != len(prev.merged)*nports {
		prev = &endpointMemo{} // a memo of other ports: nothing to reuse
	}
	memo := *prev
	memo.pending = 0
	// align[i] is the index in prev of merged endpoint i's address, -1
	// for none. In place, prev's arrays are memo's, and an endpoint
	// reuses only what its own index held; otherwise memo's arrays are
	// new, and the endpoints of the addresses prev has are carried over
	// first, so that the walk below finds them in memo as in place.
	align := w.align[:0]
	inPlace := n == len(prev.merged)
	if inPlace {
		for i := range merged {
			align = append(align, -1)
			if p, m := &prev.merged[i], &merged[i]; *p == *m || p.addr() == m.addr() {
				align[i] = i
			}
		}
	} else {
		j := 0 // the cursor in prev.merged, in the same order
		for i := range merged {
			a := merged[i].addr()
			for j < len(prev.merged) && prev.merged[j].addr().Less(a) {
				j++
			}
			align = append(align, -1)
			if j < len(prev.merged) && prev.merged[j].addr() == a {
				align[i] = j
			}
		}
		memo = w.takeSpare(n, nports)
		copy(memo.merged, merged)
		carryOver(&memo, prev, align, nports)
	}
	w.align = align
	quiet := env.none()
	for i := range merged {
		m := &merged[i]
		o := align[i]
		eps := column{memo.eps, i, n}
		var old column
		var oldPod *podInfo
		if o >= 0 {
			old, oldPod = eps, prev.pods[o]
		}
		same := o >= 0 && prev.merged[o].sameAs(m)
		targetRef := m.ep().pod
		if same && targetRef.Name != "" && (quiet || !env.changed(targetRef)) {
			// The same slice endpoint, and its pod as it was: as before.
			memo.pods[i] = oldPod
			if oldPod == nil {
				se := m.endpoint()
				diags = append(diags, pendingDiagnostic(ns, &se, env.cluster()))
				memo.pending++
			}
			continue
		}
		se := m.endpoint()
		pod, pending := env.podFor(ns, &se)
		memo.pods[i] = pod
		switch {
		case pending:
			eps.clear(nports)
			diags = append(diags, pendingDiagnostic(ns, &se, env.cluster()))
			memo.pending++
			continue
		case same && targetRef.Name == "" && pod == oldPod && (pod == nil || quiet || !env.changed(podKey(pod))):
			// Lent by the same pod, unchanged (its object, node and
			// network), or by none: as before.
			continue
		}
		var meta *model.Endpoint
		if pod != nil {
			meta = env.podMeta(pod)
		} else {
			w.anon = env.anonymous(se.addresses, se.nodeName)
			meta = &w.anon
		}
		sliceEndpoints(eps, svc, &se, meta, endpointHealth(se.conditions, tr.draining), tr.disc, old)
	}
	memo.entries = entryEndpoints(ns, svc, tr.disc, env, prev.entries)
	if inPlace {
		copy(memo.merged, merged) // after the walk, which reads prev's
	} else {
		w.keepSpare(prev)
	}
	return hintsAllOrNothing(assemble(svc, &memo, len(merged))), diags, memo
}

func podKey(p *podInfo) types.NamespacedName {
	return types.NamespacedName{Namespace: p.namespace, Name: p.name}
}

// column is the endpoints of one merged endpoint in a memo's eps, one
// per service port: eps[k*n+i] for port k. The zero column holds none.
type column struct {
	eps  []*model.Endpoint
	i, n int
}

func (c column) at(k int) *model.Endpoint {
	if c.eps == nil {
		return nil
	}
	return c.eps[k*c.n+c.i]
}

func (c column) set(k int, ep *model.Endpoint) { c.eps[k*c.n+c.i] = ep }

func (c column) clear(nports int) {
	for k := range nports {
		c.set(k, nil)
	}
}

// carryOver copies into memo's columns the endpoints prev holds for the
// addresses align maps (see serviceEndpoints), a run of consecutive
// addresses at a time.
func carryOver(memo, prev *endpointMemo, align []int, nports int) {
	n, pn := len(memo.merged), len(prev.merged)
	for i := 0; i < len(align); {
		o := align[i]
		if o < 0 {
			i++
			continue
		}
		r := 1
		for i+r < len(align) && align[i+r] == o+r {
			r++
		}
		for k := range nports {
			copy(memo.eps[k*n+i:k*n+i+r], prev.eps[k*pn+o:k*pn+o+r])
		}
		i += r
	}
}

// sliceEndpoints fills eps, one per service port, with the endpoints of
// one slice endpoint: for each port the slice serves (a slice port of the
// same name), meta with the slice endpoint's addresses (in the pod's
// order when they are the pod's), port, state and discoverability. An
// endpoint equal to the one old holds for the port is taken from it.
func sliceEndpoints(eps column, svc *model.Service, se *sliceEndpoint, meta *model.Endpoint, st endpointState, disc model.Discoverability, old column) {
	// A pod's addresses, when the slices list them, in the pod's order
	// (primary first; IPv6 first in an IPv6-primary cluster).
	own := sameAddresses(meta.Addresses, se.addresses)
	for k, p := range svc.Ports {
		num, ok := se.ports.get(p.Name)
		if !ok {
			eps.set(k, nil)
			continue
		}
		ep := *meta
		if !own {
			ep.Addresses = se.addresses
		}
		ep.Hostname = ""
		ep.Port = num
		ep.ServicePortName = p.Name
		ep.Health, ep.Serving = st.health, st.serving
		ep.Hints = se.hints
		ep.Discoverability = disc
		if !se.hasPod() {
			ep.Origin = se.slice
		}
		if o := old.at(k); o.Equals(&ep) {
			eps.set(k, o)
			continue
		}
		n := new(model.Endpoint)
		*n = ep // ep itself stays on the stack
		eps.set(k, n)
	}
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

// entryEndpoints returns the endpoints of the WorkloadEntries a service
// selects, in the order of their keys (by cluster, then name), with the
// service's discoverability (its slice endpoints' in the cluster: Istio
// leaves a WorkloadEntry's always discoverable, see docs/DIFFERENCES.md), taking
// from prev those that did not change.
func entryEndpoints(ns string, svc *model.Service, disc model.Discoverability, env endpointEnv, prev []*model.Endpoint) []*model.Endpoint {
	entries := env.entries(ns)
	if len(entries) == 0 {
		return nil
	}
	var out []*model.Endpoint
	for _, key := range slices.SortedFunc(maps.Keys(entries), model.WorkloadKey.Compare) {
		we := entries[key]
		if !workloadEntrySelected(svc, we) || !env.entryReachable(we) {
			continue
		}
		for _, ep := range workloadEntryEndpoints(svc, we, env.cluster()) {
			ep.Discoverability = disc // ep is new, not shared yet
			if i := slices.IndexFunc(prev, ep.Equals); i >= 0 {
				ep = prev[i]
			}
			out = append(out, ep)
		}
	}
	return out
}

// assemble returns a memo's endpoints in the order the store keeps
// (model.CompareEndpoints: by service port name, then address): port by
// port in name order, each port's slice endpoints in address order; the
// store sorts a list that is not (a dual-stack pod's endpoint sorts by its
// pod's primary address, the WorkloadEntries' come last).
func assemble(svc *model.Service, memo *endpointMemo, n int) []*model.Endpoint {
	var buf [8]int
	order := buf[:0]
	for k := range svc.Ports {
		order = append(order, k)
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(svc.Ports[a].Name, svc.Ports[b].Name) })
	out := make([]*model.Endpoint, 0, len(memo.eps)+len(memo.entries))
	for _, k := range order {
		for _, ep := range memo.eps[k*n : (k+1)*n] {
			if ep != nil {
				out = append(out, ep)
			}
		}
	}
	return append(out, memo.entries...)
}
