package proxyview

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

// changes is a changeSource the test publishes changes to.
type changes struct {
	mu   sync.Mutex
	subs []func(Change)
	snap *Snapshot
}

// Subscribe tells f the state first, as a View does.
func (c *changes) Subscribe(f func(Change)) func() {
	c.mu.Lock()
	c.subs = append(c.subs, f)
	c.mu.Unlock()
	f(Change{Initial: true, Snapshot: c.snap})
	return func() {}
}

func (c *changes) Snapshot() *Snapshot { return c.snap }

func (c *changes) publish(services ...string) {
	ch := Change{Since: time.Now()}
	for _, s := range services {
		ch.Services = append(ch.Services, model.ServiceKey{Namespace: "ns", Hostname: model.Hostname(s)})
	}
	c.mu.Lock()
	subs := c.subs
	c.mu.Unlock()
	for _, f := range subs {
		f(ch)
	}
}

// pushed records pushes with the time, since the bubble's start, at which
// each was made.
type pushed struct {
	start time.Time
	mu    sync.Mutex
	at    []time.Duration
	hosts [][]string
	n     []int
	// since holds each push's Since, from the bubble's start.
	since []time.Duration
	// initial holds the times of the Initial pushes.
	initial []time.Duration
}

func (p *pushed) push(pp Push) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pp.Initial {
		p.initial = append(p.initial, time.Since(p.start))
		if pp.Snapshot == nil || len(pp.Services) > 0 {
			panic("an initial push without its snapshot, or with services")
		}
		return
	}
	p.at = append(p.at, time.Since(p.start))
	var hs []string
	for _, k := range pp.Services {
		hs = append(hs, string(k.Hostname))
	}
	p.hosts = append(p.hosts, hs)
	p.n = append(p.n, pp.Changes)
	p.since = append(p.since, pp.Since.Sub(p.start))
}

// debounced runs a debouncer over a test source inside a synctest bubble.
func debounced(t *testing.T, opts DebounceOptions, script func(src *changes, rec *pushed)) *pushed {
	rec := &pushed{}
	synctest.Test(t, func(t *testing.T) {
		rec.start = time.Now()
		src := &changes{snap: &Snapshot{gen: 7}}
		d, err := newDebouncer(src, rec.push, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := d.Run(ctx); err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		synctest.Wait() // subscribed
		script(src, rec)
		time.Sleep(time.Minute) // every timer fires
		cancel()
		<-done
	})
	return rec
}

func TestDebounceBurstIsOnePush(t *testing.T) {
	rec := debounced(t, DebounceOptions{}, func(src *changes, _ *pushed) {
		for _, h := range []string{"a", "b", "a", "c"} {
			src.publish(h)
			time.Sleep(50 * time.Millisecond)
		}
	})
	// The last change came at 150ms; quiet for 100ms after it.
	if diff := cmp.Diff([]time.Duration{250 * time.Millisecond}, rec.at); diff != "" {
		t.Errorf("push times (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"a", "b", "c"}}, rec.hosts); diff != "" {
		t.Errorf("pushed services (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{4}, rec.n); diff != "" {
		t.Errorf("changes per push (-want +got):\n%s", diff)
	}
	// The push is as old as its first change.
	if diff := cmp.Diff([]time.Duration{0}, rec.since); diff != "" {
		t.Errorf("pushes' Since (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{0}, rec.initial); diff != "" {
		t.Errorf("initial pushes (-want +got):\n%s", diff)
	}
}

func TestDebounceSeparateBursts(t *testing.T) {
	rec := debounced(t, DebounceOptions{Quiet: time.Second}, func(src *changes, _ *pushed) {
		src.publish("a")
		time.Sleep(3 * time.Second)
		src.publish("b")
	})
	if diff := cmp.Diff([]time.Duration{time.Second, 4 * time.Second}, rec.at); diff != "" {
		t.Errorf("push times (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{0, 3 * time.Second}, rec.since); diff != "" {
		t.Errorf("pushes' Since (-want +got):\n%s", diff)
	}
}

// TestDebounceMax: a stream that never goes quiet is pushed at least
// every Max.
func TestDebounceMax(t *testing.T) {
	rec := debounced(t, DebounceOptions{Quiet: 100 * time.Millisecond, Max: time.Second}, func(src *changes, _ *pushed) {
		for range 25 { // one change every 90ms for 2.25s
			src.publish("a")
			time.Sleep(90 * time.Millisecond)
		}
	})
	// Due 1s after the first change of each batch (at 0s, then at 1.08s,
	// the first change after the first push), then 100ms after the last
	// change, at 2.16s.
	want := []time.Duration{time.Second, 2080 * time.Millisecond, 2260 * time.Millisecond}
	if diff := cmp.Diff(want, rec.at); diff != "" {
		t.Errorf("push times (-want +got):\n%s", diff)
	}
	var total int
	for _, n := range rec.n {
		total += n
	}
	if total != 25 {
		t.Errorf("pushes held %d changes, want all 25", total)
	}
}

// TestDebounceOnePushAtATime: changes during a slow push wait for it and
// are the next push.
func TestDebounceOnePushAtATime(t *testing.T) {
	rec := &pushed{}
	synctest.Test(t, func(t *testing.T) {
		rec.start = time.Now()
		src := &changes{snap: &Snapshot{}}
		inPush := make(chan struct{})
		d, err := newDebouncer(src, func(p Push) {
			rec.push(p)
			if !p.Initial && len(rec.at) == 1 {
				close(inPush)
				time.Sleep(time.Second) // a slow push
			}
		}, DebounceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = d.Run(ctx)
		}()
		synctest.Wait()
		src.publish("a")
		<-inPush
		src.publish("b") // at 100ms, during the first push
		time.Sleep(time.Minute)
		cancel()
		<-done
	})
	if diff := cmp.Diff([]time.Duration{100 * time.Millisecond, 1100 * time.Millisecond}, rec.at); diff != "" {
		t.Errorf("push times (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"a"}, {"b"}}, rec.hosts); diff != "" {
		t.Errorf("pushed services (-want +got):\n%s", diff)
	}
}

func TestDebounceNothingToPush(t *testing.T) {
	rec := debounced(t, DebounceOptions{}, func(*changes, *pushed) {})
	if len(rec.at) != 0 {
		t.Errorf("pushes without changes: %v", rec.at)
	}
}

func TestNewDebouncerRefuses(t *testing.T) {
	v, err := New(newFake(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		v    *View
		push func(Push)
	}{
		{"no view", nil, func(Push) {}},
		{"no push function", v, nil},
	} {
		if d, err := NewDebouncer(tt.v, tt.push, DebounceOptions{}); !errors.Is(err, ErrInvalidOptions) || d != nil {
			t.Errorf("%s: NewDebouncer = %v, %v; want nil, ErrInvalidOptions", tt.name, d, err)
		}
	}
}
