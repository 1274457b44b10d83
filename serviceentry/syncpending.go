package serviceentry

import (
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// What holds the controller's initial sync back (registry.SyncReporter).

// unsyncedSource is a Source that says which of its kinds it waits for,
// as InformerSource does (Unsynced).
type unsyncedSource interface {
	Unsynced() []Kind
}

// PendingSync returns what the initial sync waits for: Run
// (registry.PendingRun); the source, by kind when it says (an
// InformerSource: the kinds whose informers have not delivered their
// initial lists, registry.PendingList), else as a whole
// (registry.PendingSource); then the conversion of the initial state
// and its delivery to the subscribers (registry.PendingInitial). It
// returns nil once the controller has synced. Safe for concurrent use.
func (c *Controller) PendingSync() []registry.Pending {
	if c.store.HasSynced() {
		return nil
	}
	shard := registry.Pending{Shard: model.ShardKey{Provider: model.External, Cluster: c.opts.ClusterID}}
	pending := func(r registry.PendingReason, kind string) registry.Pending {
		p := shard
		p.Reason, p.Kind = r, kind
		return p
	}
	if !c.ran.Load() {
		return []registry.Pending{pending(registry.PendingRun, "")}
	}
	select {
	case <-c.src.Synced():
		return []registry.Pending{pending(registry.PendingInitial, "")}
	default:
	}
	us, ok := c.src.(unsyncedSource)
	if !ok {
		return []registry.Pending{pending(registry.PendingSource, "")}
	}
	var out []registry.Pending
	for _, k := range us.Unsynced() {
		out = append(out, pending(registry.PendingList, k.String()))
	}
	if len(out) == 0 { // listed between Synced and Unsynced
		return []registry.Pending{pending(registry.PendingInitial, "")}
	}
	return registry.SortPending(out)
}
