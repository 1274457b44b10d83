package proxyview

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/meshreg/meshreg/internal/derived"
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
		o.Quiet = derived.DefaultQuiet
	}
	if o.Max <= 0 {
		o.Max = derived.DefaultMax
	}
	return o
}

// Push is one debounced batch of changes.
type Push struct {
	// Initial is true for the first push, made as soon as the view tells
	// the debouncer its state (at once when the view runs): its consumer
	// should build everything from Snapshot. Services and Gateways are
	// then empty.
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
	// Since is when the first event among the changes it holds reached
	// the view (Change.Since); zero for the Initial push.
	Since time.Time
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
// the next. Run runs it.
type Debouncer struct {
	src  changeSource
	push func(Push)
	loop *derived.Loop[batch, Push]
}

// batch is the changes of the next push.
type batch struct {
	since    time.Time
	initial  bool
	services map[model.ServiceKey]struct{}
	gateways bool
	changes  int
}

func newBatch() batch { return batch{services: map[model.ServiceKey]struct{}{}} }

// NewDebouncer returns a debouncer of v's changes that hands each push
// to push; Run starts it. The error wraps ErrInvalidOptions.
func NewDebouncer(v *View, push func(Push), opts DebounceOptions) (*Debouncer, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: NewDebouncer: no view", ErrInvalidOptions)
	}
	return newDebouncer(v, push, opts)
}

func newDebouncer(src changeSource, push func(Push), opts DebounceOptions) (*Debouncer, error) {
	if push == nil {
		return nil, fmt.Errorf("%w: NewDebouncer: %w", ErrInvalidOptions, errors.New("no push function"))
	}
	o := opts.defaults()
	return &Debouncer{
		src:  src,
		push: push,
		loop: derived.NewLoop[batch, Push]("proxyview debouncer", newBatch, derived.Debounce{Quiet: o.Quiet, Max: o.Max}),
	}, nil
}

// Run subscribes to the view's changes and calls push, on its own
// goroutine, one call at a time, until ctx is done; then it returns nil.
// The first call is the Initial push of the view's state; each later one
// holds the changes since the one before, so that nothing the view
// publishes is missed. A debouncer runs once; a second call returns an
// error wrapping registry.ErrAlreadyRunning.
func (d *Debouncer) Run(ctx context.Context) error {
	return d.loop.Run(ctx, func() func() { return d.src.Subscribe(d.add) }, d.apply, nil)
}

// add gathers one change into the batch; the view's state, the first,
// is pushed at once.
func (d *Debouncer) add(c Change) {
	if c.Initial {
		d.loop.MarkNow(func(b *batch) { b.initial = true })
		return
	}
	d.loop.Mark(func(b *batch) {
		b.changes++
		for _, k := range c.Services {
			b.services[k] = struct{}{}
		}
		b.gateways = b.gateways || c.Gateways
		if b.since.IsZero() || c.Since.Before(b.since) {
			b.since = c.Since
		}
	})
}

// apply pushes a batch. The changes that come with the initial state are
// in its snapshot, read now.
func (d *Debouncer) apply(b batch, _ time.Time) (Push, bool) {
	p := Push{Initial: true}
	if !b.initial {
		p = Push{
			Services: slices.SortedFunc(maps.Keys(b.services), model.ServiceKey.Compare),
			Gateways: b.gateways,
			Changes:  b.changes,
			Since:    b.since,
		}
	}
	p.Snapshot = d.src.Snapshot()
	d.push(p)
	return p, false
}
