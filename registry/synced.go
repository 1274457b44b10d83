package registry

import (
	"context"
	"sync"
)

// SyncedEvent says that a registry's initial state is complete: the
// events a handler received before it hold that state, so a consumer
// that has handled it holds the state too, with no need to poll
// HasSynced. A registry publishes it once, when it syncs; a handler that
// subscribes after that receives it after its initial events, marked
// Initial. HasSynced turns true once every handler subscribed at that
// moment has returned from it.
type SyncedEvent struct {
	// Initial is true for the event that ends the replay of a synced
	// registry's state to a new subscriber, false for the one published
	// when the registry synced.
	Initial bool
}

// Deliver calls h.OnSynced when h is a SyncHandler.
func (e SyncedEvent) Deliver(h Handler) {
	if sh, ok := h.(SyncHandler); ok {
		sh.OnSynced(e)
	}
}

// SyncHandler is implemented by handlers that take the synced event. A
// handler that does not implement it is not sent it.
type SyncHandler interface {
	OnSynced(SyncedEvent)
}

// WaitSynced blocks until r's initial state is complete, as a
// subscription of its own learns from r's SyncedEvent, or until ctx is
// done. It polls nothing, and the subscription takes no other event.
//
// When ctx ends first, the error is a *SyncError that names what r still
// waited for (when r is a SyncReporter: every registry of meshreg and
// the aggregate are) and wraps ctx's error, so that errors.Is(err,
// context.DeadlineExceeded) holds after a timeout.
func WaitSynced(ctx context.Context, r Reader) error {
	synced := make(chan struct{})
	var once sync.Once
	unsubscribe := r.Subscribe(HandlerFuncs{SyncedFunc: func(SyncedEvent) { once.Do(func() { close(synced) }) }})
	defer unsubscribe()
	select {
	case <-synced:
		return nil
	case <-ctx.Done():
		e := &SyncError{Err: ctx.Err()}
		if sr, ok := r.(SyncReporter); ok {
			e.Pending = sr.PendingSync()
		}
		return e
	}
}
