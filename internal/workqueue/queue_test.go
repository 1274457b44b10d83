package workqueue_test

import (
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/meshreg/meshreg/internal/workqueue"
)

type batch map[string]int // object → its latest version

func newQueue() *workqueue.Queue[batch] {
	return workqueue.New(batch{}, func(b *batch) bool { return len(*b) == 0 })
}

// TestCoalesces: changes of one object before the worker takes the batch
// are one entry, the latest; the worker is woken; Idle follows Take and
// Done.
func TestCoalesces(t *testing.T) {
	q := newQueue()
	if !q.Idle() {
		t.Fatal("a new queue is not idle")
	}
	for v := range 3 {
		q.Add(func(b *batch) { (*b)["pod-a"] = v })
	}
	q.Add(func(b *batch) { (*b)["pod-b"] = 7 })
	select {
	case <-q.Wake():
	default:
		t.Fatal("Add did not wake the worker")
	}
	if q.Idle() {
		t.Fatal("idle with a batch gathering")
	}
	got := q.Take(batch{})
	if want := (batch{"pod-a": 2, "pod-b": 7}); !maps.Equal(got, want) {
		t.Errorf("batch = %v, want %v", got, want)
	}
	if q.Idle() {
		t.Error("idle while the batch taken is applied")
	}
	q.Done()
	if !q.Idle() {
		t.Error("not idle once the batch is applied and nothing gathers")
	}
}

// TestConcurrentProducers: every change recorded by concurrent producers
// reaches the worker, in one batch or another.
func TestConcurrentProducers(t *testing.T) {
	q := newQueue()
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 100 {
				key := string(rune('a'+p)) + "/" + string(rune('0'+i%10))
				q.Add(func(b *batch) { (*b)[key] = i })
			}
		})
	}
	seen := map[string]bool{}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; !finished; {
		select {
		case <-q.Wake():
		case <-done:
			finished = true
		}
		for k := range q.Take(batch{}) {
			seen[k] = true
		}
		q.Done()
	}
	if len(seen) != 40 {
		t.Errorf("the worker saw %d objects, want 40: %v", len(seen), slices.Sorted(maps.Keys(seen)))
	}
}

// TestTakeIf: a batch not due stays, gathering; a due one is taken.
func TestTakeIf(t *testing.T) {
	q := newQueue()
	q.Add(func(b *batch) { (*b)["a"] = 1 })
	if _, ok := q.TakeIf(batch{}, func(b *batch) bool { return len(*b) >= 2 }); ok {
		t.Fatal("took a batch not due")
	}
	q.Add(func(b *batch) { (*b)["b"] = 1 })
	got, ok := q.TakeIf(batch{}, func(b *batch) bool { return len(*b) >= 2 })
	if !ok || len(got) != 2 {
		t.Fatalf("TakeIf = %v, %v; want the two objects", got, ok)
	}
	q.Done()
	if !q.Idle() {
		t.Error("not idle after the due batch was applied")
	}
}
