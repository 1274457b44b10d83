package kube

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		name: "an address listed twice in a slice: the first listing",
		slices: []*discoveryv1.EndpointSlice{
			slice("s", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "a", false), podEP("10.0.0.2", "b", true), podEP("10.0.0.1", "c", true)),
		},
		want: []want{{"10.0.0.1", "a", "s", false}, {"10.0.0.2", "b", "s", true}},
	}, {
		name: "three slices, interleaved addresses, one in two of them",
		slices: []*discoveryv1.EndpointSlice{
			slice("s1", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.5", "e", true), podEP("10.0.0.1", "a", true)),
			slice("s2", 1, discoveryv1.AddressTypeIPv4, podEP("10.0.0.4", "d", true), podEP("10.0.0.2", "b", true)),
			slice("s3", 2, discoveryv1.AddressTypeIPv4, podEP("10.0.0.3", "c", true), podEP("10.0.0.5", "e", false)),
		},
		want: []want{{"10.0.0.1", "a", "s1", true}, {"10.0.0.2", "b", "s2", true}, {"10.0.0.3", "c", "s3", true},
			{"10.0.0.4", "d", "s2", true}, {"10.0.0.5", "e", "s3", false}},
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
