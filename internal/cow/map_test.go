package cow

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestEditLeavesTheOriginal checks the persistence contract against a
// plain map: random edits build new versions while every earlier version
// keeps its entries.
func TestEditLeavesTheOriginal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m Map[int, int]
	var versions []Map[int, int]
	var want []map[int]int
	cur := map[int]int{}
	for range 50 {
		e := m.Edit()
		for range rng.IntN(200) {
			k := rng.IntN(1000)
			if rng.IntN(4) == 0 {
				e.Delete(k)
				delete(cur, k)
			} else {
				e.Set(k, rng.Int())
				v, _ := e.Get(k)
				cur[k] = v
			}
		}
		m = e.Done()
		versions = append(versions, m)
		want = append(want, maps.Clone(cur))
	}
	for i, v := range versions {
		got := maps.Collect(v.All())
		if !maps.Equal(got, want[i]) {
			t.Fatalf("version %d: %d entries, want %d (or values differ)", i, len(got), len(want[i]))
		}
		if v.Len() != len(want[i]) {
			t.Errorf("version %d: Len() = %d, want %d", i, v.Len(), len(want[i]))
		}
		for k, wv := range want[i] {
			if gv, ok := v.Get(k); !ok || gv != wv {
				t.Errorf("version %d: Get(%d) = %d, %v; want %d", i, k, gv, ok, wv)
			}
		}
	}
}

func TestZeroMap(t *testing.T) {
	var m Map[string, int]
	if _, ok := m.Get("a"); ok || m.Len() != 0 {
		t.Fatalf("zero map not empty")
	}
	for range m.All() {
		t.Fatal("zero map visited an entry")
	}
	e := m.Edit()
	e.Delete("a") // absent: no change
	e.Set("a", 1)
	e.Set("a", 2)
	n := e.Done()
	if v, ok := n.Get("a"); !ok || v != 2 || n.Len() != 1 {
		t.Errorf("after Set: Get = %d, %v, Len = %d", v, ok, n.Len())
	}
	if m.Len() != 0 {
		t.Errorf("edit changed the zero map")
	}
}

// TestEditCopiesOnePath checks what an edit of one entry copies: the
// root, the entry's node and its leaf; every other node and leaf is the
// earlier version's. And two editors of one version do not see each
// other's writes.
func TestEditCopiesOnePath(t *testing.T) {
	e := Map[int, int]{}.Edit()
	for i := range 100000 {
		e.Set(i, i)
	}
	m := e.Done()
	e1, e2 := m.Edit(), m.Edit()
	e1.Set(7, -7)
	e2.Delete(7)
	m1, m2 := e1.Done(), e2.Done()
	if v, _ := m1.Get(7); v != -7 {
		t.Errorf("m1: Get(7) = %d, want -7", v)
	}
	if _, ok := m2.Get(7); ok || m2.Len() != 99999 || m1.Len() != 100000 {
		t.Errorf("m2 has 7, or lengths %d, %d are wrong", m1.Len(), m2.Len())
	}
	if v, _ := m.Get(7); v != 7 {
		t.Errorf("the original changed: Get(7) = %d", v)
	}
	i, j := m.root.place(7)
	for n := range fan {
		if (m1.root.nodes[n] == m.root.nodes[n]) == (n == i) {
			t.Errorf("node %d: shared = %v, want %v", n, m1.root.nodes[n] == m.root.nodes[n], n != i)
		}
	}
	for l := range fan {
		shared := sameMap(m1.root.nodes[i].leaves[l], m.root.nodes[i].leaves[l])
		if shared == (l == j) {
			t.Errorf("leaf %d of the edited node: shared = %v, want %v", l, shared, l != j)
		}
	}
}

// sameMap reports whether a and b are one map.
func sameMap(a, b map[int]int) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func BenchmarkEditOne(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := Map[int, int]{}.Edit()
			for i := range n {
				e.Set(i, i)
			}
			m := e.Done()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				e := m.Edit()
				e.Set(i%n, i)
				m = e.Done()
			}
		})
	}
}
