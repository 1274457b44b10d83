package registry_test

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// ev returns a service add event whose service is named name, so that a
// recorder can tell events apart.
func ev(name string) registry.Event {
	return registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: name}}
}

// recorder is a Handler that records the names of the services it is
// given. An optional hook runs inside the handler, after recording.
type recorder struct {
	mu    sync.Mutex
	names []string
	hook  func(name string)
}

func (r *recorder) OnService(e registry.ServiceEvent) {
	name := e.Service().Name
	r.mu.Lock()
	r.names = append(r.names, name)
	r.mu.Unlock()
	if r.hook != nil {
		r.hook(name)
	}
}
func (r *recorder) OnEndpoints(registry.EndpointsEvent) {}
func (r *recorder) OnWorkload(registry.WorkloadEvent)   {}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.names)
}

func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	if got := r.got(); !slices.Equal(got, want) {
		t.Errorf("handler received %v, want %v", got, want)
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func TestNotifierOrderPerSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		recs := []*recorder{{}, {}, {}}
		for _, r := range recs {
			defer n.Subscribe(r, nil)()
		}
		want := names("s", 200)
		for _, name := range want {
			n.Notify(ev(name))
		}
		synctest.Wait()
		for _, r := range recs {
			r.expect(t, want...)
		}
	})
}

func TestNotifierLateSubscriberGetsInitialEventsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		early := &recorder{}
		defer n.Subscribe(early, nil)()
		n.Notify(ev("before"))

		late := &recorder{}
		defer n.Subscribe(late, []registry.Event{ev("initial-1"), ev("initial-2")})()
		// Notified before the late subscriber's goroutine had any chance to
		// run: still queued behind its initial events.
		n.Notify(ev("after"))
		synctest.Wait()
		early.expect(t, "before", "after")
		late.expect(t, "initial-1", "initial-2", "after")
	})
}

func TestNotifierUnsubscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		gone, kept := &recorder{}, &recorder{}
		unsubscribe := n.Subscribe(gone, nil)
		defer n.Subscribe(kept, nil)()
		n.Notify(ev("1"))
		synctest.Wait()

		unsubscribe()
		unsubscribe() // idempotent: must not remove kept
		if got := n.Len(); got != 1 {
			t.Fatalf("Len() = %d after unsubscribing one of two twice, want 1", got)
		}
		n.Notify(ev("2"))
		synctest.Wait()
		gone.expect(t, "1")
		kept.expect(t, "1", "2")
	})
}

func TestNotifierUnsubscribeFromHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		r := &recorder{}
		var unsubscribe func()
		r.hook = func(name string) {
			if name == "2" {
				unsubscribe()
				unsubscribe()
			}
		}
		unsubscribe = n.Subscribe(r, nil)
		for _, name := range names("", 5) {
			n.Notify(ev(name))
		}
		synctest.Wait()
		// "3" and "4" were queued when the handler unsubscribed: dropped.
		r.expect(t, "0", "1", "2")
		if n.Len() != 0 {
			t.Errorf("Len() = %d after unsubscribing from the handler, want 0", n.Len())
		}
	})
}

func TestNotifierUnsubscribeDropsQueuedEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		release := make(chan struct{})
		r := &recorder{hook: func(name string) {
			if name == "0" {
				<-release
			}
		}}
		unsubscribe := n.Subscribe(r, nil)
		for _, name := range names("", 4) {
			n.Notify(ev(name))
		}
		synctest.Wait() // the handler is blocked in "0"; 1-3 are queued
		unsubscribe()
		close(release)
		synctest.Wait()
		r.expect(t, "0")
	})
}

func TestNotifierMarkAndDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		if m := n.Mark(); m != 0 || !n.Delivered(m) {
			t.Fatalf("empty notifier: Mark() = %d, Delivered = %v; want 0, true", m, n.Delivered(m))
		}
		n.Notify(ev("unheard")) // no subscriber: counted, delivered to nobody
		if m := n.Mark(); m != 1 || !n.Delivered(m) {
			t.Fatalf("after one event without subscribers: Mark() = %d, Delivered = %v; want 1, true", m, n.Delivered(m))
		}

		release := make(chan struct{})
		slow := &recorder{hook: func(name string) {
			if name == "slow" {
				<-release
			}
		}}
		defer n.Subscribe(slow, nil)()
		before := n.Mark()
		if !n.Delivered(before) {
			t.Error("a new subscriber holds back events notified before it subscribed")
		}
		n.Notify(ev("slow"))
		n.Notify(ev("next"))
		mark := n.Mark()
		if mark != before+2 {
			t.Errorf("Mark() = %d after two events, want %d", mark, before+2)
		}
		synctest.Wait() // the handler is blocked in "slow"
		if n.Delivered(mark) || n.Delivered(before+1) {
			t.Error("Delivered reports true while the handler is still in the event")
		}
		if !n.Delivered(before) {
			t.Error("Delivered(before) turned false")
		}

		// A late subscriber with initial events does not hold back marks
		// taken before it subscribed.
		release2 := make(chan struct{})
		late := &recorder{hook: func(string) { <-release2 }}
		unsubscribeLate := n.Subscribe(late, []registry.Event{ev("initial")})

		close(release)
		synctest.Wait()
		if !n.Delivered(mark) {
			t.Error("Delivered(mark) is false once every subscriber has handled it")
		}
		slow.expect(t, "slow", "next")

		// A later event is held back by the late subscriber's blocked
		// handler (still in its initial event) until it unsubscribes.
		n.Notify(ev("last"))
		synctest.Wait() // slow has handled "last"; late is blocked
		if n.Delivered(n.Mark()) {
			t.Error("Delivered is true while a subscriber has the last event queued")
		}
		unsubscribeLate()
		if !n.Delivered(n.Mark()) {
			t.Error("an unsubscribed handler still holds back Delivered")
		}
		close(release2)
		synctest.Wait()
		late.expect(t, "initial")
	})
}

// A subscriber's initial events count: a mark taken after it subscribed
// is not delivered until the handler has them. (A registry that subscribes
// a handler to its state, then marks itself synced, must not report
// HasSynced while that state is still queued.)
func TestNotifierDeliveredWaitsForInitialEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		release := make(chan struct{})
		r := &recorder{hook: func(string) { <-release }}
		before := n.Mark()
		defer n.Subscribe(r, []registry.Event{ev("initial")})()
		mark := n.Mark()
		synctest.Wait() // the handler is blocked in its initial event
		if n.Delivered(mark) {
			t.Error("Delivered(mark) while the initial events are still being handled")
		}
		if !n.Delivered(before) {
			t.Error("a mark taken before the subscription waits for it")
		}
		close(release)
		synctest.Wait()
		if !n.Delivered(mark) {
			t.Error("Delivered(mark) is false once the initial events are handled")
		}
		// Other subscribers are not held back by the initial events'
		// position in the stream.
		other := &recorder{}
		defer n.Subscribe(other, nil)()
		r.hook = nil
		n.Notify(ev("next"))
		synctest.Wait()
		if !n.Delivered(n.Mark()) {
			t.Error("Delivered is false once every handler has every event")
		}
		r.expect(t, "initial", "next")
		other.expect(t, "next")
	})
}

// Concurrent Subscribe, unsubscribe and Notify, run under -race. Every
// subscriber sees one total order of events, each subscription a gap-free
// run of it, and no handler is called concurrently with itself.
func TestNotifierConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		var inHandler atomic.Int32
		var overlap atomic.Bool
		newRecorder := func() *recorder {
			r := &recorder{}
			var busy atomic.Bool
			r.hook = func(string) {
				if busy.Swap(true) {
					overlap.Store(true)
				}
				inHandler.Add(1)
				_ = n.Len() // handlers may query the notifier
				inHandler.Add(-1)
				busy.Store(false)
			}
			return r
		}
		stable := []*recorder{newRecorder(), newRecorder()}
		for _, r := range stable {
			defer n.Subscribe(r, nil)()
		}

		const notifiers, perNotifier, churners = 4, 500, 4
		var churned []*recorder
		var churnedMu sync.Mutex
		var wg sync.WaitGroup
		for i := range notifiers {
			wg.Go(func() {
				for j := range perNotifier {
					n.Notify(ev(strconv.Itoa(i) + "-" + strconv.Itoa(j)))
				}
			})
		}
		for range churners {
			wg.Go(func() {
				for range 20 {
					r := newRecorder()
					churnedMu.Lock()
					churned = append(churned, r)
					churnedMu.Unlock()
					unsubscribe := n.Subscribe(r, nil)
					n.Len()
					unsubscribe()
				}
			})
		}
		wg.Wait()
		synctest.Wait()

		if overlap.Load() {
			t.Error("a handler was called concurrently with itself")
		}
		order := stable[0].got()
		if len(order) != notifiers*perNotifier {
			t.Fatalf("stable subscriber received %d events, want %d", len(order), notifiers*perNotifier)
		}
		if got := stable[1].got(); !slices.Equal(got, order) {
			t.Fatal("two subscribers received the events in different orders")
		}
		index := map[string]int{}
		for i, name := range order {
			index[name] = i
		}
		for _, r := range churned {
			got := r.got()
			for i := 1; i < len(got); i++ {
				if index[got[i]] != index[got[i-1]]+1 {
					t.Fatalf("a short-lived subscriber received %v, not a gap-free run of the order every subscriber sees", got)
				}
			}
		}
		if n.Len() != len(stable) {
			t.Errorf("Len() = %d after the churn, want %d", n.Len(), len(stable))
		}
	})
}

// TestNotifierQueueRefilledWhileDraining: events notified while the
// handler works through a batch (here by the handler itself) queue behind
// it and arrive, in order, after it; the arrays of batches handled are
// reused for the queue.
func TestNotifierQueueRefilledWhileDraining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		r := &recorder{}
		r.hook = func(name string) {
			if name[0] == 's' {
				n.Notify(ev("t" + name[1:]))
			}
		}
		defer n.Subscribe(r, nil)()
		const events = 3000
		for _, name := range names("s", events) {
			n.Notify(ev(name))
		}
		synctest.Wait()

		got := r.got()
		if len(got) != 2*events {
			t.Fatalf("handler received %d events, want %d", len(got), 2*events)
		}
		pos := map[string]int{}
		for i, name := range got {
			pos[name] = i
		}
		for i := range events {
			s, tt := "s"+strconv.Itoa(i), "t"+strconv.Itoa(i)
			if pos[s] >= pos[tt] {
				t.Errorf("%s arrived at %d, after %s at %d", s, pos[s], tt, pos[tt])
			}
			if i > 0 && (pos["s"+strconv.Itoa(i-1)] > pos[s] || pos["t"+strconv.Itoa(i-1)] > pos[tt]) {
				t.Errorf("event %d arrived before event %d of its kind", i, i-1)
			}
		}
	})
}
