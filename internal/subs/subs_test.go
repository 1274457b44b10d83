package subs_test

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/meshreg/meshreg/internal/subs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSet(t *testing.T) {
	var s subs.Set[string]
	removeA := s.Add("a")
	s.Add("b")
	removeC := s.Add("c")
	removeA()
	removeA() // twice: nothing
	if got := fmt.Sprint(s.All()); got != "[b c]" {
		t.Errorf("All() = %s, want [b c] in the order added", got)
	}
	removeC()
	if s.Len() != 1 {
		t.Errorf("Len() = %d, want 1", s.Len())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			remove := s.Add("x")
			_ = s.All()
			remove()
		})
	}
	wg.Wait()
	if s.Len() != 1 {
		t.Errorf("Len() after concurrent adds and removes = %d, want 1", s.Len())
	}
}

func ExampleSet() {
	var s subs.Set[func(int)]
	remove := s.Add(func(n int) { fmt.Println("first got", n) })
	s.Add(func(n int) { fmt.Println("second got", n) })
	for _, f := range s.All() {
		f(1)
	}
	remove()
	for _, f := range s.All() {
		f(2)
	}
	// Output:
	// first got 1
	// second got 1
	// second got 2
}
