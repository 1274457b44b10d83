package intern_test

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshreg/meshreg/internal/intern"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLabelsShares(t *testing.T) {
	x := intern.NewMaps()
	a := x.Labels(map[string]string{"app": "a", "version": "v1"})
	b := x.Labels(map[string]string{"version": "v1", "app": "a"})
	if a != b {
		t.Fatal("equal maps were not shared")
	}
	for _, m := range []map[string]string{
		{"app": "a", "version": "v2"},         // another value
		{"app": "v1", "version": "a"},         // values swapped
		{"app": "a"},                          // fewer labels
		{"app": "a", "version": "v1", "": ""}, // an empty key
	} {
		if got := x.Labels(m); got == a {
			t.Errorf("Labels(%v) shared %v", m, a.M)
		} else if fmt.Sprint(got.M) != fmt.Sprint(m) {
			t.Errorf("Labels(%v).M = %v", m, got.M)
		}
	}
	if x.Labels(nil) != nil || x.Labels(map[string]string{}) != nil {
		t.Error("an empty map did not yield nil")
	}
	runtime.KeepAlive(a)
}

func TestLabelsForgetsUnheld(t *testing.T) {
	x := intern.NewMaps()
	held := x.Labels(map[string]string{"app": "kept"})
	for i := range 100 {
		x.Labels(map[string]string{"app": fmt.Sprint(i)})
	}
	// Cleanups run on their own goroutine after a collection: wait for
	// them, with a deadline that fails the test rather than hangs it.
	deadline := time.Now().Add(10 * time.Second)
	for x.Len() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("Len() = %d after the unheld maps were dropped, want 1", x.Len())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if again := x.Labels(map[string]string{"app": "kept"}); again != held {
		t.Error("a held map was not handed out again")
	}
}

func TestLabelsConcurrent(t *testing.T) {
	x := intern.NewMaps()
	var wg sync.WaitGroup
	got := make([]*intern.Labels, 8)
	for i := range got {
		wg.Go(func() {
			for j := range 200 {
				l := x.Labels(map[string]string{"app": fmt.Sprint(j % 10)})
				if j%10 == 3 {
					got[i] = l
				}
			}
		})
	}
	wg.Wait()
	for _, l := range got[1:] {
		if l != got[0] {
			t.Fatal("goroutines were handed different maps for equal labels")
		}
	}
}

func TestHashIgnoresOrder(t *testing.T) {
	seed := maphash.MakeSeed()
	a := map[string]string{}
	b := map[string]string{}
	for i := range 50 {
		a[fmt.Sprint("k", i)] = fmt.Sprint("v", i)
	}
	for i := 49; i >= 0; i-- {
		b[fmt.Sprint("k", i)] = fmt.Sprint("v", i)
	}
	if intern.Hash(seed, a) != intern.Hash(seed, b) {
		t.Error("equal maps hashed apart")
	}
	b["k0"] = "v1"
	if intern.Hash(seed, a) == intern.Hash(seed, b) {
		t.Error("different maps hashed together")
	}
}

func ExampleMaps() {
	x := intern.NewMaps()
	a := x.Labels(map[string]string{"app": "reviews", "version": "v1"})
	b := x.Labels(map[string]string{"version": "v1", "app": "reviews"})
	fmt.Println(a == b, b.M["app"])
	// Output: true reviews
}

// sameMap reports whether a and b are one map.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestCounted: equal maps are one map for as long as one holder keeps
// it; the last release forgets it.
func TestCounted(t *testing.T) {
	x := intern.NewCounted()
	a := x.Hold(map[string]string{"app": "a", "v": "1"})
	b := x.Hold(map[string]string{"v": "1", "app": "a"})
	c := x.Hold(map[string]string{"app": "a", "v": "2"})
	if !sameMap(a, b) || sameMap(a, c) {
		t.Fatal("equal maps not shared, or different maps shared")
	}
	if e := x.Hold(map[string]string{}); e == nil || x.Len() != 2 {
		t.Fatal("an empty map is returned as it is and not held")
	}
	x.Release(a)
	if d := x.Hold(map[string]string{"app": "a", "v": "1"}); !sameMap(d, b) {
		t.Fatal("a map still held is forgotten")
	}
	x.Release(b)
	x.Release(b)
	x.Release(c)
	x.Release(map[string]string{"never": "held"}) // ignored
	if x.Len() != 0 {
		t.Fatalf("released maps still held: %d", x.Len())
	}
}
