package registry

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Notifier is a set of handlers and the queues that feed them: the piece
// every registry uses to publish events. It is safe for concurrent use.
//
// Each subscription has its own ordered queue. Notify only appends to the
// queues and never calls a handler, so a registry may call it while holding
// its own lock; a goroutine per subscription, running only while its queue
// is not empty, calls the handler. A slow handler therefore delays nobody
// but itself.
//
// To keep a late subscriber's initial state and later events in order, a
// registry calls Subscribe and Notify under the same lock that guards its
// state.
//
// The zero value is an empty set, ready to use.
type Notifier struct {
	// mu serialises changes to subs, the sequence number, and the
	// queuing of each event (so that every queue holds events in sequence
	// order). It is held only to append to queues, never while calling a
	// handler.
	mu sync.Mutex
	// subs is the current subscriptions, replaced whole on change so that
	// Delivered and Len can read it without mu.
	subs atomic.Pointer[[]*subscription]
	// seq numbers the events notified so far.
	seq uint64
	// observer, when set (Observe), is told of what the notifier does.
	observer NotifierObserver
	// nextID numbers the subscriptions, for QueueDepths.
	nextID uint64
}

// NotifierObserver is told of a Notifier's work, for metrics. Its methods
// are called from Notify and from the subscriptions' goroutines,
// concurrently, and must be quick.
type NotifierObserver interface {
	// Notified is called for each event notified, with its kind.
	Notified(kind EventKinds)
	// Waited is called before a handler is called with an event, with
	// how long the event waited in the subscription's queue.
	Waited(d time.Duration)
}

// Observe makes o the notifier's observer. Call it before the notifier
// is used; nil turns observing off.
func (n *Notifier) Observe(o NotifierObserver) {
	n.mu.Lock()
	n.observer = o
	n.mu.Unlock()
}

// QueueDepths returns, for each current subscription by the number it
// was given when it subscribed, the events queued for it and not yet
// handled (the one being handled included).
func (n *Notifier) QueueDepths() map[uint64]int {
	out := map[uint64]int{}
	if subs := n.subs.Load(); subs != nil {
		for _, s := range *subs {
			out[s.id] = int(s.depth.Load())
		}
	}
	return out
}

type subscription struct {
	id uint64
	h  Handler
	// observer is the notifier's, when set.
	observer NotifierObserver
	// depth counts the events queued and not yet handled.
	depth atomic.Int64
	// kinds is what h takes (Selective); other events are not queued.
	kinds EventKinds

	// mu guards queue and running, and orders the setting of closed
	// with the queuing: nothing is queued once closed is set. closed is
	// atomic so that the handler's goroutine can check it between
	// events without taking mu from Notify.
	mu      sync.Mutex
	queue   []queued
	running bool
	closed  atomic.Bool

	// done is the sequence number up to which the handler has returned
	// from every event queued for it (the number at subscription, before
	// any); pushed is that of the last event queued for it. The handler
	// has caught up with a mark when done reaches min(mark, pushed).
	done   atomic.Uint64
	pushed atomic.Uint64
}

type queued struct {
	ev  Event
	seq uint64
	// at is when the event was queued, with an observer; zero otherwise.
	at time.Time
}

// Subscribe adds h to the set. The initial events are queued for h first,
// ahead of anything notified afterwards. The returned function removes h
// and drops its queued events; it is idempotent. A call to h that was
// already being made when it ran may still complete. When h is Selective,
// only events of its kinds are queued for it, the initial ones included.
func (n *Notifier) Subscribe(h Handler, initial []Event) (unsubscribe func()) {
	s := &subscription{h: h, kinds: kindsOf(h)}
	n.mu.Lock()
	n.nextID++
	s.id, s.observer = n.nextID, n.observer
	s.done.Store(n.seq)
	s.pushed.Store(n.seq)
	if len(initial) > 0 {
		// The initial events take a position of their own in the stream,
		// after every mark taken so far and before every mark taken
		// from now on: a later mark is not Delivered until this handler
		// has its initial state, an earlier one does not wait for it.
		n.seq++
		var at time.Time
		if n.observer != nil {
			at = time.Now()
		}
		for _, ev := range initial {
			if s.kinds&kindOf(ev) != 0 {
				s.push(queued{ev: ev, seq: n.seq, at: at})
			}
		}
	}
	var next []*subscription
	if cur := n.subs.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, s)
	n.subs.Store(&next)
	n.mu.Unlock()

	var once sync.Once
	return func() { once.Do(func() { n.remove(s) }) }
}

func (n *Notifier) remove(s *subscription) {
	n.mu.Lock()
	if cur := n.subs.Load(); cur != nil {
		next := slices.DeleteFunc(slices.Clone(*cur), func(x *subscription) bool { return x == s })
		n.subs.Store(&next)
	}
	n.mu.Unlock()
	s.close()
}

// Notify queues ev for every current subscriber that takes its kind (see
// Selective).
//
// The event is numbered and queued under one lock, so that concurrent
// Notify calls reach every subscriber in the same order, the order of
// their numbers: otherwise a subscriber could receive event 2 before
// event 1, and Delivered(1) could report true while event 1 was still
// queued. Queuing only appends; it never calls a handler.
func (n *Notifier) Notify(ev Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	q := queued{ev: ev, seq: n.seq}
	kind := kindOf(ev)
	if n.observer != nil {
		q.at = time.Now()
		n.observer.Notified(kind)
	}
	if subs := n.subs.Load(); subs != nil {
		for _, s := range *subs {
			if s.kinds&kind != 0 {
				s.push(q)
			}
		}
	}
}

// Mark returns a position in the stream of events: every event notified so
// far, and the initial events of every subscription made so far, are at or
// before it.
func (n *Notifier) Mark() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seq
}

// Delivered reports whether every current subscriber's handler has returned
// from every event at or before mark, its initial events included.
// Subscribers that came after the mark do not hold it back. Registries use
// it to report HasSynced only once their initial state has reached their
// handlers.
func (n *Notifier) Delivered(mark uint64) bool {
	subs := n.subs.Load()
	if subs == nil {
		return true
	}
	for _, s := range *subs {
		if s.done.Load() < min(mark, s.pushed.Load()) {
			return false
		}
	}
	return true
}

// Len returns the number of subscribers.
func (n *Notifier) Len() int {
	if subs := n.subs.Load(); subs != nil {
		return len(*subs)
	}
	return 0
}

func (s *subscription) push(q queued) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return
	}
	s.queue = append(s.queue, q)
	s.depth.Add(1)
	s.pushed.Store(q.seq)
	if !s.running {
		// An idle subscription has handled everything queued for it, so
		// the events before q that it does not take (Selective) must not
		// hold back a mark that falls between them and q either.
		if q.seq-1 > s.done.Load() {
			s.done.Store(q.seq - 1)
		}
		s.running = true
		go s.drain()
	}
}

// drain calls the handler for queued events until the queue is empty or
// the subscription is closed, then exits. It takes the queue a batch at a
// time, and hands the array of the batch it is done with back as the next
// queue: in a burst (a registry's initial state is one) the queue then
// does not grow from nothing for every batch. Nothing is kept once the
// queue is empty.
func (s *subscription) drain() {
	var spare []queued // an emptied batch, the next queue's array
	for {
		s.mu.Lock()
		if len(s.queue) == 0 || s.closed.Load() {
			s.queue = nil
			s.running = false
			s.mu.Unlock()
			return
		}
		batch := s.queue
		s.queue = spare
		s.mu.Unlock()
		for _, q := range batch {
			if s.closed.Load() {
				break
			}
			// Every event before q that this subscription takes has been
			// handled: the others, not queued for it (Selective), must
			// not hold back a mark that falls between them and q.
			if q.seq-1 > s.done.Load() {
				s.done.Store(q.seq - 1)
			}
			if s.observer != nil {
				s.observer.Waited(time.Since(q.at))
			}
			q.ev.Deliver(s.h)
			if !s.closed.Load() {
				s.depth.Add(-1)
			}
			s.done.Store(q.seq)
		}
		clear(batch) // the events go with the batch
		spare = batch[:0]
	}
}

func (s *subscription) close() {
	s.mu.Lock()
	s.closed.Store(true)
	s.queue = nil
	s.depth.Store(0)
	s.mu.Unlock()
}
