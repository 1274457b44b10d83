package kube

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
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

// TestReplaceDepsMatchesFreshIndex replaces the deps of a few services
// at random, and after each replacement compares the reverse index with
// one built from scratch over the services' current deps: replaceDeps
// touches only the deps added or gone, and must leave the index as a
// fresh build would.
func TestReplaceDepsMatchesFreshIndex(t *testing.T) {
	var pool []dep
	for i := range 6 {
		pool = append(pool,
			dep{kind: depPod, name: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("p", i)}},
			dep{kind: depIP, ip: netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})})
	}
	pool = append(pool, dep{kind: depNode, name: types.NamespacedName{Name: "n1"}}, dep{kind: depNode, name: types.NamespacedName{Name: "n2"}})
	services := []types.NamespacedName{{Namespace: "ns", Name: "a"}, {Namespace: "ns", Name: "b"}, {Namespace: "other", Name: "a"}}
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		o := newObjects()
		current := map[types.NamespacedName][]dep{}
		for step := range 30 {
			svc := services[r.IntN(len(services))]
			var deps []dep
			for _, d := range pool {
				if r.IntN(3) == 0 {
					deps = append(deps, d)
				}
			}
			slices.SortFunc(deps, compareDeps)
			o.setDeps(svc, deps)
			current[svc] = deps
			for _, d := range pool {
				var want []types.NamespacedName
				for _, s := range services {
					if slices.Contains(current[s], d) {
						want = append(want, s)
					}
				}
				got := slices.Clone(o.dependents(d))
				slices.SortFunc(got, func(x, y types.NamespacedName) int { return strings.Compare(x.String(), y.String()) })
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d, step %d: dependents of %+v = %v, want %v", seed, step, d, got, want)
				}
			}
			if n := len(o.rdeps) + o.rdepsIP.Len(); n > len(pool) {
				t.Fatalf("seed %d, step %d: %d index entries for %d deps: an emptied entry was kept", seed, step, n, len(pool))
			}
		}
	}
}
