package kube

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// testEnv is an endpointEnv over pods given by the test: each pod's
// metadata is a value of its own, and changed lists the pods the test
// says changed since the memos. It counts the pods looked up.
type testEnv struct {
	pods    map[types.NamespacedName]*podInfo
	metas   map[*podInfo]*model.Endpoint
	changes set[types.NamespacedName]
	lookups int
}

func newTestEnv(pods ...*corev1.Pod) *testEnv {
	e := &testEnv{pods: map[types.NamespacedName]*podInfo{}, metas: map[*podInfo]*model.Endpoint{}, changes: set[types.NamespacedName]{}}
	for _, p := range pods {
		e.setPod(p)
	}
	return e
}

func (e *testEnv) setPod(p *corev1.Pod) {
	info := newPodInfo(p, nil)
	e.pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = info
	meta := podEndpoint(info, podEnv{cluster: "c1", trustDomain: "td"})
	e.metas[info] = &meta
}

func (e *testEnv) podFor(ns string, se *sliceEndpoint) (*podInfo, bool) {
	e.lookups++
	if se.hasPod() {
		p := e.pods[se.pod]
		return p, p == nil
	}
	for _, p := range e.pods {
		if p.namespace == ns && podLendsByIP(p) && slices.Contains(p.addrs, se.addresses[0]) {
			return p, false
		}
	}
	return nil, false
}

func (e *testEnv) podMeta(p *podInfo) *model.Endpoint { return e.metas[p] }
func (e *testEnv) anonymous(addrs []netip.Addr, node string) model.Endpoint {
	return anonymousEndpoint(addrs, node, podEnv{cluster: "c1"})
}
func (e *testEnv) changed(pod types.NamespacedName) bool                        { _, ok := e.changes[pod]; return ok }
func (e *testEnv) none() bool                                                   { return len(e.changes) == 0 }
func (e *testEnv) entries(string) map[model.WorkloadKey]*model.WorkloadInstance { return nil }
func (e *testEnv) entryReachable(*model.WorkloadInstance) bool                  { return true }
func (e *testEnv) cluster() model.ClusterID                                     { return "c1" }

// compute runs serviceEndpoints for svc over slices, from prev.
func compute(t *testing.T, svc *corev1.Service, env endpointEnv, prev *endpointMemo, in ...*discoveryv1.EndpointSlice) ([]*model.Endpoint, []model.Diagnostic, endpointMemo) {
	t.Helper()
	converted, _ := convertService(svc, "", testServiceConfig)
	infos := make([]*sliceInfo, len(in))
	for i, s := range in {
		infos[i] = newSliceInfo(s)
	}
	var w endpointWork
	return serviceEndpoints(svc.Namespace, converted, endpointTraits{}, infos, env, prev, &w)
}

// The endpoints come out in the order the store keeps them
// (model.CompareEndpoints: service port name, then address), whatever the
// order the service declares its ports in, so that the store does not
// sort them.
func TestServiceEndpointsInStoreOrder(t *testing.T) {
	tests := []struct {
		name  string
		ports []corev1.ServicePort
	}{
		{"one port", []corev1.ServicePort{svcPort("http", 80)}},
		{"two ports, in name order", []corev1.ServicePort{svcPort("grpc", 90), svcPort("http", 80)}},
		{"two ports, in reverse name order", []corev1.ServicePort{svcPort("http", 80), svcPort("grpc", 90)}},
		{"three ports", []corev1.ServicePort{svcPort("tcp", 70), svcPort("http", 80), svcPort("admin", 90)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sliceObj("ns", "web-1", "web", discoveryv1.AddressTypeIPv4, 8080,
				sliceEP{addr: "10.0.0.3", pod: "c", ready: true}, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.2", ready: false})
			for _, p := range []string{"grpc", "tcp", "admin"} {
				s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr(p), Port: ptr[int32](9000)})
			}
			env := newTestEnv(podObj("ns", "a", "10.0.0.1", "n1", nil), podObj("ns", "c", "10.0.0.3", "n1", nil))
			eps, _, _ := compute(t, svcObj("ns", "web", "10.96.0.1", nil, tt.ports...), env, &endpointMemo{}, s)
			if want := 3 * len(tt.ports); len(eps) != want {
				t.Fatalf("%d endpoints, want %d", len(eps), want)
			}
			if !slices.IsSortedFunc(eps, model.CompareEndpoints) {
				var got []string
				for _, ep := range eps {
					got = append(got, ep.ServicePortName+"/"+ep.Address())
				}
				t.Errorf("endpoints not in the store's order: %v", got)
			}
		})
	}
}

// What the memo keeps: a slice endpoint whose inputs did not change keeps
// its endpoints (the very pointers) without its pod being looked up; one
// whose conditions changed, or whose pod changed, is computed again; a
// pending endpoint stays reported.
func TestEndpointMemo(t *testing.T) {
	svc := svcObj("ns", "web", "10.96.0.1", nil, svcPort("http", 80), svcPort("grpc", 90))
	eps := []sliceEP{{"10.0.0.1", "a", true}, {"10.0.0.2", "b", true}, {"10.0.0.3", "", true}, {"10.0.0.4", "ghost", true}}
	slice := func(eps ...sliceEP) *discoveryv1.EndpointSlice {
		s := sliceObj("ns", "web-1", "web", discoveryv1.AddressTypeIPv4, 8080, eps...)
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr("grpc"), Port: ptr[int32](9090)})
		return s
	}
	env := newTestEnv(podObj("ns", "a", "10.0.0.1", "n1", map[string]string{"v": "1"}),
		podObj("ns", "b", "10.0.0.2", "n1", map[string]string{"v": "1"}), podObj("ns", "c", "10.0.0.3", "n1", nil))
	first, diags, memo := compute(t, svc, env, &endpointMemo{}, slice(eps...))
	if len(first) != 6 || len(diags) != 1 {
		t.Fatalf("%d endpoints, %d diagnostics: want 6 (three served on two ports) and the pending one's", len(first), len(diags))
	}
	byAddr := func(eps []*model.Endpoint) map[string]*model.Endpoint {
		m := map[string]*model.Endpoint{}
		for _, ep := range eps {
			m[ep.ServicePortName+"/"+ep.Address()] = ep
		}
		return m
	}

	// b's readiness flips: b's endpoints are new, a's kept without a
	// lookup (c's, lent by IP, are looked up again but kept).
	env.lookups = 0
	flipped := slices.Clone(eps)
	flipped[1].ready = false
	second, diags, memo2 := compute(t, svc, env, &memo, slice(flipped...))
	before, after := byAddr(first), byAddr(second)
	for _, k := range []string{"http/10.0.0.1", "grpc/10.0.0.1", "http/10.0.0.3", "grpc/10.0.0.3"} {
		if before[k] != after[k] {
			t.Errorf("%s: an unchanged endpoint was replaced", k)
		}
	}
	if after["http/10.0.0.2"] == before["http/10.0.0.2"] || after["http/10.0.0.2"].Health != model.Unhealthy {
		t.Errorf("the flipped endpoint %+v, want a new, unhealthy one", after["http/10.0.0.2"])
	}
	if env.lookups != 2 || len(diags) != 1 {
		t.Errorf("%d pods looked up, %d diagnostics; want 2 (b, flipped; c's lender) and the pending one's", env.lookups, len(diags))
	}

	// a changes: only a's endpoints are computed again.
	env.setPod(podObj("ns", "a", "10.0.0.1", "n1", map[string]string{"v": "2"}))
	env.changes[types.NamespacedName{Namespace: "ns", Name: "a"}] = struct{}{}
	third, _, memo3 := compute(t, svc, env, &memo2, slice(flipped...))
	before, after = after, byAddr(third)
	if after["http/10.0.0.1"] == before["http/10.0.0.1"] || after["http/10.0.0.1"].Labels["v"] != "2" {
		t.Errorf("the changed pod's endpoint %+v, want a new one with its new labels", after["http/10.0.0.1"])
	}
	if after["http/10.0.0.2"] != before["http/10.0.0.2"] {
		t.Error("an unchanged pod's endpoint was replaced")
	}

	// c's address leaves the slice, then comes back before a's: a change
	// of membership keeps every other endpoint, on both ports.
	clear(env.changes)
	shrunk, _, memo4 := compute(t, svc, env, &memo3, slice(flipped[0], flipped[1], flipped[3]))
	before, after = after, byAddr(shrunk)
	if len(shrunk) != 4 {
		t.Fatalf("%d endpoints after c left, want 4", len(shrunk))
	}
	for _, k := range []string{"http/10.0.0.1", "grpc/10.0.0.1", "http/10.0.0.2", "grpc/10.0.0.2"} {
		if before[k] != after[k] {
			t.Errorf("%s: an endpoint was replaced when another left", k)
		}
	}
	grown, _, _ := compute(t, svc, env, &memo4, slice(flipped[2], flipped[3], flipped[1], flipped[0]))
	before, after = after, byAddr(grown)
	if len(grown) != 6 || after["http/10.0.0.3"] == nil {
		t.Fatalf("%d endpoints after c came back (c's: %v), want 6", len(grown), after["http/10.0.0.3"])
	}
	for _, k := range []string{"http/10.0.0.1", "grpc/10.0.0.1", "http/10.0.0.2", "grpc/10.0.0.2"} {
		if before[k] != after[k] {
			t.Errorf("%s: an endpoint was replaced when another came", k)
		}
	}
}

// sliceEndpoints makes an endpoint per port the slice serves, with the
// metadata's labels and the slice endpoint's addresses, and takes an
// equal one from old.
func TestSliceEndpoints(t *testing.T) {
	svc := &model.Service{Ports: []model.Port{{Name: "http", Port: 80}, {Name: "grpc", Port: 90}}}
	se := &sliceEndpoint{addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, ports: portNumbers{{name: "http", num: 8080}, {name: "other", num: 1}}}
	meta := &model.Endpoint{Cluster: "c1", Labels: map[string]string{"a": "b"}}
	st := endpointState{health: model.Draining, serving: true}
	col := func() column { return column{eps: make([]*model.Endpoint, 2), n: 1} }
	got := col()
	sliceEndpoints(got, svc, se, meta, st, model.AlwaysDiscoverable, column{})
	if ep := got.at(0); ep == nil || got.at(1) != nil || ep.Port != 8080 || ep.ServicePortName != "http" || ep.Health != model.Draining ||
		!ep.Serving || ep.Cluster != "c1" || !slices.Equal(ep.Addresses, se.addresses) {
		t.Errorf("sliceEndpoints = %+v", got.eps)
	}
	again := col()
	sliceEndpoints(again, svc, se, meta, st, model.AlwaysDiscoverable, got)
	if again.at(0) != got.at(0) {
		t.Error("an equal endpoint was not taken from old")
	}
	sliceEndpoints(again, svc, se, meta, endpointState{health: model.Healthy, serving: true}, model.AlwaysDiscoverable, got)
	if again.at(0) == got.at(0) || again.at(0).Health != model.Healthy {
		t.Errorf("a changed endpoint was taken from old: %+v", again.at(0))
	}
	// A pod's own addresses, in the pod's order, are kept.
	meta.Addresses = []netip.Addr{netip.MustParseAddr("fd00::1"), netip.MustParseAddr("10.0.0.1")}
	se.addresses = []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")}
	sliceEndpoints(again, svc, se, meta, st, model.AlwaysDiscoverable, column{})
	if &again.at(0).Addresses[0] != &meta.Addresses[0] {
		t.Errorf("addresses %v: want the pod's, in its order", again.at(0).Addresses)
	}
}
