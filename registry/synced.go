package registry

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
