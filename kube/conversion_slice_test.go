package kube

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// slice builds a slice for mergeSlices tests; age orders creation times.
func slice(name string, age int, family discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(time.Unix(int64(1000+age), 0)),
			Labels: map[string]string{discoveryv1.LabelServiceName: "svc"}},
		AddressType: family,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}, {Name: ptr("nil")}},
		Endpoints:   eps,
	}
}

func podEP(addr, pod string, ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod}, NodeName: ptr("node-" + pod)}
}

func TestMergeSlices(t *testing.T) {
	type want struct {
		addrs string // comma-separated
		pod   string
		slice string
		ready bool
	}
	tests := []struct {
		name      string
		slices    []*discoveryv1.EndpointSlice
		want      []want
		wantDiags []string
	}{{
		name: "two slices",
		slices: []*discoveryv1.EndpointSlice{
			slice("s1", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.2", "b", true)),
			slice("s2", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", false)),
		},
		want: []want{{"10.0.0.1", "a", "s2", false}, {"10.0.0.2", "b", "s1", true}},
	}, {
		name: "moving endpoint counted once, newest slice wins",
		slices: []*discoveryv1.EndpointSlice{
			slice("new", 5, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", true)),
			slice("old", 1, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", false)),
		},
		want: []want{{"10.0.0.1", "a", "new", true}},
	}, {
		name: "same age: the later name wins",
		slices: []*discoveryv1.EndpointSlice{
			slice("b", 1, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", true)),
			slice("a", 1, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", false)),
		},
		want: []want{{"10.0.0.1", "a", "b", true}},
	}, {
		name: "dual stack merged by pod, IPv4 first",
		slices: []*discoveryv1.EndpointSlice{
			slice("v6", 0, discoveryv1.AddressTypeIPv6, podEP("fd00::1", "a", true), podEP("fd00::9", "z", true)),
			slice("v4", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", true)),
		},
		want: []want{{"10.0.0.1,fd00::1", "a", "v4", true}, {"fd00::9", "z", "v6", true}},
	}, {
		name: "fqdn and malformed reported",
		slices: []*discoveryv1.EndpointSlice{
			slice("fqdn", 0, discoveryv1.AddressTypeFQDN, podEP("db.example.com", "a", true)),
			slice("v4", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.300", "a", true), podEP("10.0.0.2", "b", true)),
		},
		want:      []want{{"10.0.0.2", "b", "v4", true}},
		wantDiags: []string{"address type \"FQDN\" is not supported", "malformed address \"10.0.0.300\""},
	}, {
		name: "no targetRef: one endpoint per address",
		slices: []*discoveryv1.EndpointSlice{
			slice("s", 0, discoveryv1.AddressTypeIPv4, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1", "10.0.0.2"}}),
		},
		want: []want{{"10.0.0.1", "", "s", true}, {"10.0.0.2", "", "s", true}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := mergeAPISlices(tt.slices, "c1")
			// The result must not depend on the order of the slices.
			rev := slices.Clone(tt.slices)
			slices.Reverse(rev)
			got2, _ := mergeAPISlices(rev, "c1")
			if len(got) != len(got2) {
				t.Fatalf("order changed the result: %d vs %d", len(got), len(got2))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d endpoints, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				var as []string
				for _, a := range g.addresses {
					as = append(as, a.String())
				}
				if strings.Join(as, ",") != w.addrs || g.pod.Name != w.pod || g.slice != w.slice || endpointHealth(g.conditions, false).health == model.Healthy != w.ready {
					t.Errorf("endpoint %d = %v pod %q slice %q health %v; want %+v", i, as, g.pod.Name, g.slice, endpointHealth(g.conditions, false).health, w)
				}
				if !slices.Equal(as, func() []string {
					var s []string
					for _, a := range got2[i].addresses {
						s = append(s, a.String())
					}
					return s
				}()) || got2[i].slice != g.slice {
					t.Errorf("order changed endpoint %d", i)
				}
				if num, _ := g.ports.get("http"); w.pod != "" && num != 8080 {
					t.Errorf("ports = %v", g.ports)
				}
				if _, ok := g.ports.get("nil"); ok {
					t.Errorf("port without number kept")
				}
			}
			if len(diags) != len(tt.wantDiags) {
				t.Errorf("diagnostics %v, want %v", diags, tt.wantDiags)
			}
			for _, w := range tt.wantDiags {
				if !slices.ContainsFunc(diags, func(d model.Diagnostic) bool { return strings.Contains(d.Message, w) && d.Kind == "EndpointSlice" }) {
					t.Errorf("no diagnostic %q in %v", w, diags)
				}
			}
		})
	}
}

func TestSliceEndpoints(t *testing.T) {
	svc := &model.Service{Ports: []model.Port{{Name: "http", Port: 80}, {Name: "grpc", Port: 90}}}
	se := &sliceEndpoint{addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, ports: portNumbers{{name: "http", num: 8080}, {name: "other", num: 1}}}
	meta := &model.Endpoint{Cluster: "c1", Labels: map[string]string{"a": "b"}}
	got := appendSliceEndpoints(nil, svc, se, meta, endpointState{health: model.Draining, serving: true}, nil)
	if len(got) != 1 || got[0].Port != 8080 || got[0].ServicePortName != "http" || got[0].Health != model.Draining || got[0].Cluster != "c1" {
		t.Errorf("appendSliceEndpoints = %+v", got)
	}
	if !slices.Equal(got[0].Addresses, se.addresses) || &got[0].Addresses[0] == &se.addresses[0] {
		t.Errorf("addresses %v: want a copy of the merge's %v", got[0].Addresses, se.addresses)
	}

	// An equal endpoint in the previous list is reused; a changed one is
	// not.
	again := appendSliceEndpoints(nil, svc, se, meta, endpointState{health: model.Draining, serving: true}, reuserOf(got, svc))
	if len(again) != 1 || again[0] != got[0] {
		t.Errorf("unchanged endpoint not reused: %p vs %p", again[0], got[0])
	}
	changed := appendSliceEndpoints(nil, svc, se, meta, endpointState{health: model.Healthy, serving: true}, reuserOf(got, svc))
	if len(changed) != 1 || changed[0] == got[0] || changed[0].Health != model.Healthy {
		t.Errorf("changed endpoint reused: %+v", changed[0])
	}

	// With the pod's addresses in meta, those are kept.
	podAddrs := []netip.Addr{netip.MustParseAddr("10.0.0.1")}
	meta.Addresses = podAddrs
	own := appendSliceEndpoints(nil, svc, se, meta, endpointState{health: model.Draining, serving: true}, nil)
	if &own[0].Addresses[0] != &podAddrs[0] {
		t.Error("the pod's addresses were copied")
	}
}

// reuserOf returns a reuser over prev for svc's ports.
func reuserOf(prev []*model.Endpoint, svc *model.Service) *endpointReuser {
	var r endpointReuser
	r.reset(prev, len(svc.Ports))
	return &r
}

// TestEndpointReuser checks the reuser's cursors against a linear scan:
// whatever the order of the lookups (ascending per port as
// serviceEndpoints makes them, or not), it finds exactly the published
// endpoint equal to the one looked up.
func TestEndpointReuser(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ports := []string{"grpc", "http"}
	for round := range 200 {
		var prev []*model.Endpoint
		for _, name := range ports {
			for i := range rng.IntN(30) {
				if rng.IntN(4) == 0 {
					continue // gaps
				}
				addr := netip.AddrFrom4([4]byte{10, 0, byte(i / 256), byte(i)})
				for dup := range 1 + rng.IntN(2) { // equal keys, different values
					prev = append(prev, &model.Endpoint{Addresses: []netip.Addr{addr}, ServicePortName: name, Port: 8080, Cluster: "c", Weight: uint32(dup)})
				}
			}
		}
		slices.SortStableFunc(prev, model.CompareEndpoints)
		r := reuserOf(prev, &model.Service{Ports: []model.Port{{Name: ports[0]}, {Name: ports[1]}}})
		var queries []*model.Endpoint
		for _, name := range ports {
			for i := range 32 {
				queries = append(queries, &model.Endpoint{Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})}, ServicePortName: name, Port: 8080, Cluster: "c", Weight: uint32(rng.IntN(3))})
			}
		}
		if round%2 == 1 {
			rng.Shuffle(len(queries), func(i, j int) { queries[i], queries[j] = queries[j], queries[i] })
		}
		for _, q := range queries {
			var want *model.Endpoint
			for _, p := range prev {
				if p.Equals(q) {
					want = p
					break
				}
			}
			k := slices.Index(ports, q.ServicePortName)
			if round%4 == 3 {
				k = -1
			}
			if got := r.find(k, q); got != want {
				t.Fatalf("round %d: find(%d, %v port %s weight %d) = %p, want %p", round, k, q.Addresses, q.ServicePortName, q.Weight, got, want)
			}
		}
	}
	var none *endpointReuser
	if none.find(0, &model.Endpoint{}) != nil {
		t.Error("a nil reuser found an endpoint")
	}
}

// FuzzMergeSlices checks that any pair of slices merges without
// panicking, independently of their order, into endpoints with valid,
// family-ordered addresses.
func FuzzMergeSlices(f *testing.F) {
	f.Add("10.0.0.1", "a", "fd00::1", "a", "IPv4", "IPv6", int64(0), int64(0), true)
	f.Add("10.0.0.1", "a", "10.0.0.1", "b", "IPv4", "IPv4", int64(1), int64(0), false)
	f.Add("db.example.com", "", "::ffff:10.0.0.1", "", "FQDN", "IPv6", int64(0), int64(5), true)
	f.Add("garbage", "x", "", "", "", "IPv4", int64(-1), int64(0), false)
	f.Fuzz(func(t *testing.T, a1, p1, a2, p2, f1, f2 string, t1, t2 int64, ready bool) {
		mk := func(name, addr, pod, family string, age int64) *discoveryv1.EndpointSlice {
			ep := discoveryv1.Endpoint{Addresses: []string{addr, addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
			if pod != "" {
				ep.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: pod}
			}
			return &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(age%1e9, 0))},
				AddressType: discoveryv1.AddressType(family), Endpoints: []discoveryv1.Endpoint{ep},
			}
		}
		s1, s2 := mk("s1", a1, p1, f1, t1), mk("s2", a2, p2, f2, t2)
		got, _ := mergeAPISlices([]*discoveryv1.EndpointSlice{s1, s2}, "c")
		got2, _ := mergeAPISlices([]*discoveryv1.EndpointSlice{s2, s1}, "c")
		if len(got) != len(got2) {
			t.Fatalf("order dependent: %v vs %v", got, got2)
		}
		seen := map[netip.Addr]bool{}
		for i, se := range got {
			if len(se.addresses) == 0 || len(se.addresses) > 2 {
				t.Fatalf("bad addresses %v", se.addresses)
			}
			if len(se.addresses) == 2 && (!se.addresses[0].Is4() || se.addresses[1].Is4()) {
				t.Errorf("dual-stack order %v", se.addresses)
			}
			if !slices.Equal(se.addresses, got2[i].addresses) || se.slice != got2[i].slice {
				t.Errorf("order dependent endpoint %d: %v/%s vs %v/%s", i, se.addresses, se.slice, got2[i].addresses, got2[i].slice)
			}
			for _, a := range se.addresses {
				if seen[a] {
					t.Errorf("address %v counted twice", a)
				}
				seen[a] = true
			}
		}
	})
}

// TestServiceEndpointsInStoreOrder: the endpoints of a service come out of
// serviceEndpoints already in the order the store keeps them
// (model.CompareEndpoints: service port name, then address), whatever
// the order the service declares its ports in, so that the store does
// not sort them.
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
			f := newFakeCluster(nodeObj("n1", "r", "z1"), svcObj("ns", "web", "10.96.0.1", nil, tt.ports...),
				podObj("ns", "a", "10.0.0.1", "n1", nil), podObj("ns", "c", "10.0.0.3", "n1", nil), s)
			c := startController(t, f, Options{})
			c.mu.Lock()
			key := types.NamespacedName{Namespace: "ns", Name: "web"}
			svc, _ := c.convertService(key, c.objs.services[key])
			var scratch endpointScratch
			eps, _, _ := c.serviceEndpoints(key, svc, &scratch, false)
			c.mu.Unlock()
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
