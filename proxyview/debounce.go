package proxyview

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/meshreg/meshreg/internal/workqueue"
	"github.com/meshreg/meshreg/model"
)

// DebounceOptions configure a Debouncer. The zero value is valid: the
// defaults are Istio's.
type DebounceOptions struct {
	// Quiet is how long no change must come before a push: a burst of
	// changes is one push. Default: 100ms (Istio's PILOT_DEBOUNCE_AFTER).
	Quiet time.Duration
	// Max bounds how long a push waits after the first change it holds,
	// however busy the stream. Default: 10s (PILOT_DEBOUNCE_MAX).
	Max time.Duration
}

func (o DebounceOptions) defaults() DebounceOptions {
	if o.Quiet <= 0 {
		o.Quiet = 100 * time.Millisecond
	}
	if o.Max <= 0 {
		o.Max = 10 * time.Second
	}
	return o
}

// Push is one debounced batch of changes.
type Push struct {
	// Initial is true for the first push of Run, made as it starts: its
	// snapshot is the view's state when the debouncer subscribed, and
	// its consumer should build everything from it. Services and
	// Gateways are then empty.
	Initial bool
	// Snapshot is the view's latest snapshot when the push was made: it
	// holds every change listed, and perhaps later ones.
	Snapshot *Snapshot
	// Services are the keys of the services that changed since the
	// previous push, sorted.
	Services []model.ServiceKey
	// Gateways is true when the network gateways changed since the
	// previous push.
	Gateways bool
	// Changes is the number of generations the push holds.
	Changes int
}

// changeSource is what a Debouncer reads: a View.
type changeSource interface {
	Subscribe(func(Change)) (unsubscribe func())
	Snapshot() *Snapshot
}

// Debouncer turns a view's changes into pushes, as Istio's debounce does:
// a push waits until no change has come for DebounceOptions.Quiet, or
// until DebounceOptions.Max has passed since the first change it holds,
// and one push at a time runs: changes that come during a push wait for
// the next.
type Debouncer struct {
	src  changeSource
	opts DebounceOptions
	// in gathers the changes of the next push.
	in *workqueue.Queue[batch]
}

// batch is the changes of the next push, and when they came.
type batch struct {
	services      map[model.ServiceKey]struct{}
	gateways      bool
	changes       int
	first, latest time.Time
}

func newBatch() batch { return batch{services: map[model.ServiceKey]struct{}{}} }

func (b *batch) empty() bool { return b.changes == 0 }

// NewDebouncer returns a debouncer of v's changes; Run starts it.
func NewDebouncer(v *View, opts DebounceOptions) *Debouncer { return newDebouncer(v, opts) }

func newDebouncer(src changeSource, opts DebounceOptions) *Debouncer {
	return &Debouncer{src: src, opts: opts.defaults(), in: workqueue.New(newBatch(), (*batch).empty)}
}

// Run subscribes to the view's changes and calls push, on its own
// goroutine, one call at a time, until ctx is done; then it returns nil.
// The first call, at once, is the Initial push of the view's state; each
// later one holds the changes since the one before, so that nothing the
// view publishes is missed.
func (d *Debouncer) Run(ctx context.Context, push func(Push)) error {
	unsubscribe := d.src.Subscribe(d.add)
	defer unsubscribe()
	// After subscribing: a change published from now on is also pushed
	// later, at worst once more than needed.
	push(Push{Initial: true, Snapshot: d.src.Snapshot()})
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	waiting := false // whether timer is set
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-d.in.Wake():
			if !waiting {
				timer.Reset(d.opts.Quiet)
				waiting = true
			}
		case <-timer.C:
			waiting = false
			for {
				p, wait, ok := d.take(time.Now())
				if !ok {
					if wait > 0 {
						timer.Reset(wait)
						waiting = true
					}
					break
				}
				p.Snapshot = d.src.Snapshot()
				push(p)
				d.in.Done()
			}
		}
	}
}

// add gathers one change into the batch.
func (d *Debouncer) add(c Change) {
	now := time.Now()
	d.in.Add(func(b *batch) {
		if b.changes == 0 {
			b.first = now
		}
		b.latest = now
		b.changes++
		for _, k := range c.Services {
			b.services[k] = struct{}{}
		}
		b.gateways = b.gateways || c.Gateways
	})
}

// take returns the batch when it is due at now, and empties it; else how
// long until it may be (0: there is no batch).
// The caller calls d.in.Done once it has pushed a batch taken.
func (d *Debouncer) take(now time.Time) (p Push, wait time.Duration, ok bool) {
	b, ok := d.in.TakeIf(newBatch(), func(b *batch) bool {
		if b.changes == 0 {
			return false
		}
		quiet := now.Sub(b.latest)
		if quiet < d.opts.Quiet && now.Sub(b.first) < d.opts.Max {
			wait = min(d.opts.Quiet-quiet, d.opts.Max-now.Sub(b.first))
			return false
		}
		return true
	})
	if !ok {
		return Push{}, wait, false
	}
	return Push{
		Services: slices.SortedFunc(maps.Keys(b.services), model.ServiceKey.Compare),
		Gateways: b.gateways,
		Changes:  b.changes,
	}, 0, true
}
