package kube

import (
	"net/netip"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestDepSet(t *testing.T) {
	pod := func(n string) dep { return dep{kind: depPod, name: types.NamespacedName{Namespace: "ns", Name: n}} }
	node := func(n string) dep { return dep{kind: depNode, name: types.NamespacedName{Name: n}} }
	ip := func(s string) dep { return dep{kind: depIP, ip: netip.MustParseAddr(s)} }
	sorted := func(ds ...dep) []dep {
		slices.SortFunc(ds, compareDeps)
		return ds
	}
	base := sorted(pod("a"), pod("b"), ip("10.0.0.1"), node("n1"))
	tests := []struct {
		name string
		deps []dep
		want bool
	}{
		{"same", sorted(pod("a"), pod("b"), ip("10.0.0.1"), node("n1")), true},
		{"other pod", sorted(pod("a"), pod("c"), ip("10.0.0.1"), node("n1")), false},
		{"other IP", sorted(pod("a"), pod("b"), ip("10.0.0.2"), node("n1")), false},
		{"IP for a name", sorted(pod("a"), ip("10.0.0.3"), ip("10.0.0.1"), node("n1")), false},
		{"name for an IP", sorted(pod("a"), pod("b"), pod("c"), node("n1")), false},
		{"fewer", sorted(pod("a"), pod("b"), node("n1")), false},
		{"none", nil, false},
	}
	s := newDepSet(base)
	if len(s.names) != 3 || len(s.ips) != 1 {
		t.Fatalf("newDepSet = %+v", s)
	}
	for _, tt := range tests {
		if got := s.equal(tt.deps); got != tt.want {
			t.Errorf("%s: equal = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !(depSet{}).equal(nil) {
		t.Error("empty sets differ")
	}
}

// TestSetDepsIndex checks that the reverse index follows a service's
// deps through replacement and removal.
func TestSetDepsIndex(t *testing.T) {
	o := newObjects()
	svc := types.NamespacedName{Namespace: "ns", Name: "s"}
	p := dep{kind: depPod, name: types.NamespacedName{Namespace: "ns", Name: "p"}}
	n := dep{kind: depNode, name: types.NamespacedName{Name: "n"}}
	a := dep{kind: depIP, ip: netip.MustParseAddr("10.0.0.1")}
	has := func(d dep) bool { return slices.Contains(o.dependents(d), svc) }

	o.setDeps(svc, []dep{p, a, n})
	if !has(p) || !has(a) || !has(n) {
		t.Fatal("deps not indexed")
	}
	o.setDeps(svc, []dep{p})
	if !has(p) || has(a) || has(n) {
		t.Error("replaced deps still indexed")
	}
	o.setDeps(svc, nil)
	if has(p) || len(o.rdeps) != 0 || o.rdepsIP.Len() != 0 || len(o.deps) != 0 {
		t.Errorf("removed deps still indexed: %v %v %v", o.rdeps, o.rdepsIP, o.deps)
	}
}
