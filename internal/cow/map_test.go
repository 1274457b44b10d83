package cow

import (
	"maps"
	"math/rand/v2"
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

func BenchmarkEditOne(b *testing.B) {
	e := Map[int, int]{}.Edit()
	for i := range 10000 {
		e.Set(i, i)
	}
	m := e.Done()
	b.ResetTimer()
	for i := range b.N {
		e := m.Edit()
		e.Set(i%10000, i)
		m = e.Done()
	}
}
