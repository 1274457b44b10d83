package derived_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshreg/meshreg/internal/derived"
	"github.com/meshreg/meshreg/registry"
)

// counter is a view of its own: marks are numbers to add, the state is
// the sum, and each change is the state after it.
type counter struct {
	loop *derived.Loop[[]int, int]
	mu   sync.Mutex
	sum  int
	// applied records each batch applied.
	applied [][]int
}

func newCounter(d derived.Debounce) *counter {
	c := &counter{}
	c.loop = derived.NewLoop[[]int, int]("counter", func() []int { return nil }, d)
	return c
}

func (c *counter) add(n int) { c.loop.Mark(func(m *[]int) { *m = append(*m, n) }) }

func (c *counter) run(ctx context.Context) error {
	return c.loop.Run(ctx, func() func() { return func() {} }, func(m []int, _ time.Time) (int, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.applied = append(c.applied, m)
		for _, n := range m {
			c.sum += n
		}
		return c.sum, len(m) > 0
	}, func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.sum
	})
}

func (c *counter) batches() [][]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.applied)
}

// Marks that come within the quiet period are one batch; a batch waits
// for no longer than the maximum after its first mark.
func TestLoopDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounter(derived.Debounce{Quiet: 100 * time.Millisecond, Max: time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.run(ctx) }()
		c.add(1)
		time.Sleep(50 * time.Millisecond)
		c.add(2)
		time.Sleep(99 * time.Millisecond)
		synctest.Wait()
		if got := c.batches(); len(got) != 0 {
			t.Fatalf("applied %v within the quiet period", got)
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if got := c.batches(); !slices.EqualFunc(got, [][]int{{1, 2}}, slices.Equal) {
			t.Fatalf("batches %v, want [[1 2]]", got)
		}
		// A mark every 60ms never leaves 100ms quiet: the maximum, 1s
		// after the first, applies them.
		for i := range 20 {
			c.add(10 + i)
			time.Sleep(60 * time.Millisecond)
		}
		synctest.Wait()
		got := c.batches()
		if len(got) < 2 || len(got[1]) != 17 { // 0, 60, ..., 960ms: 17 marks before 1s
			t.Errorf("batches %v: want the second to hold the 17 marks of its first second", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// A subscriber gets the current state first, then each change; a
// subscriber that came after a change does not get it.
func TestLoopSubscribeCurrentStateFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounter(derived.Debounce{})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = c.run(ctx) }()
		c.add(5)
		synctest.Wait()
		var mu sync.Mutex
		var first, second []int
		c.loop.Subscribe(func(n int) { mu.Lock(); first = append(first, n); mu.Unlock() })
		synctest.Wait()
		c.add(1)
		synctest.Wait()
		unsubscribe := c.loop.Subscribe(func(n int) { mu.Lock(); second = append(second, n); mu.Unlock() })
		synctest.Wait()
		c.add(2)
		synctest.Wait()
		unsubscribe()
		unsubscribe()
		c.add(3)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if want := []int{5, 6, 8, 11}; !slices.Equal(first, want) {
			t.Errorf("first subscriber got %v, want %v", first, want)
		}
		if want := []int{6, 8}; !slices.Equal(second, want) {
			t.Errorf("second subscriber got %v, want %v (the state when it came, then 8, nothing once gone)", second, want)
		}
		if !c.loop.Settled() {
			t.Error("not settled with nothing pending")
		}
	})
}

func TestLoopRunsOnce(t *testing.T) {
	c := newCounter(derived.Debounce{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.run(context.Background()); !errors.Is(err, registry.ErrAlreadyRunning) {
		t.Errorf("second Run: %v, want ErrAlreadyRunning", err)
	}
}

func TestDebounceWait(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	d := derived.Debounce{Quiet: 100 * time.Millisecond, Max: time.Second}
	for _, tc := range []struct {
		first, latest, now int
		want               time.Duration
	}{
		{0, 0, 0, 100 * time.Millisecond},
		{0, 50, 60, 90 * time.Millisecond},
		{0, 950, 960, 40 * time.Millisecond}, // the maximum comes first
		{0, 990, 1200, 0},
	} {
		if got := d.Wait(at(tc.first), at(tc.latest), at(tc.now)); got != tc.want {
			t.Errorf("Wait(%d, %d, %d) = %v, want %v", tc.first, tc.latest, tc.now, got, tc.want)
		}
	}
	if got := (derived.Debounce{}).Wait(t0, t0, t0); got != 0 {
		t.Errorf("no debounce waits %v", got)
	}
}

func TestDeps(t *testing.T) {
	d := derived.NewDeps[string, string]()
	d.Set("w1", []string{"ns/a", "gw/x", "ns/a"})
	d.Set("w2", []string{"ns/a"})
	users := func(dep string) []string {
		var out []string
		d.Users(dep, func(k string) { out = append(out, k) })
		slices.Sort(out)
		return out
	}
	if got := users("ns/a"); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Errorf("users of ns/a: %v", got)
	}
	d.Set("w1", []string{"gw/y"}) // w1 no longer reads ns/a nor gw/x
	if got := fmt.Sprint(users("ns/a"), users("gw/x"), users("gw/y")); got != "[w2] [] [w1]" {
		t.Errorf("after w1 moved: %s", got)
	}
	d.Delete("w2")
	if d.Len() != 1 || len(users("ns/a")) != 0 {
		t.Errorf("after deleting w2: %d outputs, users of ns/a %v", d.Len(), users("ns/a"))
	}
}

// A batch that holds a MarkNow is applied at once, with the marks that
// came before it, however long the quiet period.
func TestLoopMarkNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCounter(derived.Debounce{Quiet: time.Hour, Max: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.run(ctx) }()
		c.add(1)
		c.loop.MarkNow(func(m *[]int) { *m = append(*m, 2) })
		synctest.Wait()
		if got := c.batches(); !slices.EqualFunc(got, [][]int{{1, 2}}, slices.Equal) {
			t.Errorf("batches %v, want [[1 2]] at once", got)
		}
		c.add(3) // the next batch waits for the quiet period again
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := c.batches(); len(got) != 1 {
			t.Errorf("batches %v: a plain mark after MarkNow was applied before the quiet period", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// Flush applies the pending marks on the caller's goroutine, without
// Run, and does nothing when none are pending.
func TestLoopFlush(t *testing.T) {
	c := newCounter(derived.Debounce{})
	apply := func(m []int, _ time.Time) (int, bool) {
		c.applied = append(c.applied, m)
		return 0, true
	}
	c.loop.Flush(apply)
	c.add(1)
	c.add(2)
	if c.loop.Settled() {
		t.Error("Settled with marks pending")
	}
	c.loop.Flush(apply)
	if !slices.EqualFunc(c.applied, [][]int{{1, 2}}, slices.Equal) || !c.loop.Settled() {
		t.Errorf("after Flush: applied %v, settled %v; want [[1 2]], true", c.applied, c.loop.Settled())
	}
}

// A batch is applied with the time its first mark was recorded: what a
// consumer measures the delay of a change from.
func TestLoopSince(t *testing.T) {
	c := newCounter(derived.Debounce{})
	var got time.Time
	before := time.Now()
	c.add(1)
	after := time.Now()
	time.Sleep(2 * time.Millisecond)
	c.add(2)
	c.loop.Flush(func(_ []int, since time.Time) (int, bool) {
		got = since
		return 0, true
	})
	if got.Before(before) || got.After(after) {
		t.Errorf("since = %v, want the first mark's time, in [%v, %v]", got, before, after)
	}
}
