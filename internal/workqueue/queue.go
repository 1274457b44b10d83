package workqueue

import "sync"

// Queue is a coalescing queue with one consumer. B is the batch type;
// its methods are the queue's caller's, and the queue only swaps
// batches. It is safe for concurrent use.
type Queue[B any] struct {
	empty func(*B) bool

	// mu guards batch and busy.
	mu    sync.Mutex
	batch B
	// busy is set from Take to Done: a batch taken is being applied.
	busy bool
	// wake has room for one signal: a batch is gathering.
	wake chan struct{}
}

// New returns a queue gathering into batch; empty reports whether a
// batch holds no change.
func New[B any](batch B, empty func(*B) bool) *Queue[B] {
	return &Queue[B]{batch: batch, empty: empty, wake: make(chan struct{}, 1)}
}

// Add records a change: record runs on the gathering batch under the
// queue's lock, and must not block. Then the worker is woken.
func (q *Queue[B]) Add(record func(*B)) {
	q.mu.Lock()
	record(&q.batch)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wake is the worker's signal that a batch may be waiting: it receives
// at least once after each Add.
func (q *Queue[B]) Wake() <-chan struct{} { return q.wake }

// Take returns the gathered batch, puts next (an empty batch, perhaps the
// emptied storage of the one applied last) in its place, and marks the
// queue busy until Done.
func (q *Queue[B]) Take(next B) B {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.batch
	q.batch = next
	q.busy = true
	return b
}

// TakeIf is Take when due, called under the queue's lock, says the
// gathered batch is due; otherwise it leaves the batch, and returns the
// zero B and false.
func (q *Queue[B]) TakeIf(next B, due func(*B) bool) (B, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !due(&q.batch) {
		var zero B
		return zero, false
	}
	b := q.batch
	q.batch = next
	q.busy = true
	return b, true
}

// Done marks the batch taken last as applied.
func (q *Queue[B]) Done() {
	q.mu.Lock()
	q.busy = false
	q.mu.Unlock()
}

// Idle reports whether no batch is being applied and none is gathering.
func (q *Queue[B]) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.busy && q.empty(&q.batch)
}

// Look calls f with the pending batch, under the queue's lock: f reads
// it and must not keep it.
func (q *Queue[B]) Look(f func(*B)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f(&q.batch)
}
