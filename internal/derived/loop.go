package derived

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/internal/subs"
	"github.com/meshreg/meshreg/internal/workqueue"
	"github.com/meshreg/meshreg/registry"
)

// Loop is the goroutine of a derived view: marks M accumulate from the
// source's handlers (Mark), Run applies them in debounced batches and
// tells the subscribers of changes C. It is safe for concurrent use;
// Run runs once.
type Loop[M, C any] struct {
	name     string
	newMarks func() M
	debounce Debounce
	in       *workqueue.Queue[pending[M]]
	poke     chan struct{}
	running  atomic.Bool

	subs subs.Set[*subscriber[C]]
	// mu guards each subscriber's fresh.
	mu sync.Mutex
}

// pending are the marks not applied yet, with when the first and the
// latest came and how many did.
type pending[M any] struct {
	marks         M
	first, latest time.Time
	n             int
	// now says a mark asked for the batch to be applied at once.
	now bool
}

type subscriber[C any] struct {
	f func(C)
	// fresh says the subscriber has not had the current state yet.
	fresh bool
}

// NewLoop returns the loop of a view named name (for errors); newMarks
// makes empty marks.
func NewLoop[M, C any](name string, newMarks func() M, d Debounce) *Loop[M, C] {
	return &Loop[M, C]{
		name: name, newMarks: newMarks, debounce: d,
		in:   workqueue.New(pending[M]{marks: newMarks()}, func(p *pending[M]) bool { return p.n == 0 }),
		poke: make(chan struct{}, 1),
	}
}

// Mark records a change in the pending marks, from any goroutine, and
// wakes the loop. It never blocks on the loop's work.
func (l *Loop[M, C]) Mark(record func(*M)) { l.mark(record, false) }

func (l *Loop[M, C]) mark(record func(*M), now bool) {
	at := time.Now()
	l.in.Add(func(p *pending[M]) {
		if p.n == 0 {
			p.first = at
		}
		p.latest = at
		p.n++
		p.now = p.now || now
		record(&p.marks)
	})
}

// MarkNow is Mark for a change that must not wait: the batch that holds
// it is applied at once, without debounce.
func (l *Loop[M, C]) MarkNow(record func(*M)) { l.mark(record, true) }

// Subscribe registers f. Run's goroutine calls it first with the
// current state (the current function Run was given), then with each
// change, one call at a time: f must return quickly. The returned
// function unsubscribes; it is idempotent.
func (l *Loop[M, C]) Subscribe(f func(C)) (unsubscribe func()) {
	unsubscribe = l.subs.Add(&subscriber[C]{f: f, fresh: true})
	select {
	case l.poke <- struct{}{}:
	default:
	}
	return unsubscribe
}

// Settled reports whether every mark so far has been applied.
func (l *Loop[M, C]) Settled() bool { return l.in.Idle() }

// Run calls start (which subscribes the view to its source and returns
// how to unsubscribe), then, until ctx is done, applies each batch of
// marks with apply, debounced, with the time its first mark was
// recorded. When apply reports a change, the
// subscribers that have the state before it are told; a new subscriber
// is told current() instead, the state then. Run returns nil when ctx
// is done, after unsubscribing; a second call returns an error wrapping
// registry.ErrAlreadyRunning.
func (l *Loop[M, C]) Run(ctx context.Context, start func() (stop func()), apply func(M, time.Time) (C, bool), current func() C) error {
	if !l.running.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: %w", l.name, registry.ErrAlreadyRunning)
	}
	stop := start()
	defer stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-l.poke:
			l.tell(nil, current)
			continue
		case <-l.in.Wake():
		}
		for wait := l.wait(); wait > 0; wait = l.wait() {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return nil
			case <-l.poke:
				l.tell(nil, current)
				timer.Stop()
			case <-timer.C:
			}
		}
		l.applyPending(apply, current)
	}
}

// applyPending applies the pending batch, if there is one, and tells the
// subscribers. The batch and the change are garbage once it returns.
func (l *Loop[M, C]) applyPending(apply func(M, time.Time) (C, bool), current func() C) {
	p, ok := l.in.TakeIf(pending[M]{marks: l.newMarks()}, func(p *pending[M]) bool { return p.n > 0 })
	if !ok {
		return // woken again for marks an earlier batch took
	}
	c, changed := apply(p.marks, p.first)
	if changed {
		l.tell(&c, current)
	} else {
		l.tell(nil, current)
	}
	l.in.Done()
}

// Flush applies the pending marks at once, on the caller's goroutine,
// without telling the subscribers: it drives a view without Run, in
// tests and benchmarks of its rules. It must not be called while Run
// runs.
func (l *Loop[M, C]) Flush(apply func(M, time.Time) (C, bool)) {
	p, ok := l.in.TakeIf(pending[M]{marks: l.newMarks()}, func(p *pending[M]) bool { return p.n > 0 })
	if !ok {
		return
	}
	apply(p.marks, p.first)
	l.in.Done()
}

// wait is how long the pending batch waits still; 0 when none is
// pending.
func (l *Loop[M, C]) wait() time.Duration {
	var wait time.Duration
	l.in.Look(func(p *pending[M]) {
		if p.n > 0 && !p.now {
			wait = l.debounce.Wait(p.first, p.latest, time.Now())
		}
	})
	return wait
}

// tell calls the fresh subscribers with the current state and the
// others with c, when there is one.
func (l *Loop[M, C]) tell(c *C, current func() C) {
	type call struct {
		f     func(C)
		fresh bool
	}
	var calls []call
	l.mu.Lock()
	for _, s := range l.subs.All() {
		if s.fresh || c != nil {
			calls = append(calls, call{s.f, s.fresh})
			s.fresh = false
		}
	}
	l.mu.Unlock()
	var cur C
	if len(calls) > 0 && current != nil {
		cur = current()
	}
	for _, cl := range calls {
		if cl.fresh {
			cl.f(cur)
		} else {
			cl.f(*c)
		}
	}
}
