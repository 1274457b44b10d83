package debughttp

import (
	"net/http"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Sync is the answer of /sync: whether the registry has synced, and
// what its initial sync still waits for.
type Sync struct {
	// Synced is the registry's HasSynced.
	Synced bool `json:"synced"`
	// Pending is what the initial sync waits for (see
	// registry.SyncReporter), empty once synced.
	Pending []SyncPending `json:"pending"`
}

// SyncPending is one registry.Pending.
type SyncPending struct {
	// Registry is the provider of the registry that waits, or
	// "aggregate"; Cluster its cluster.
	Registry string `json:"registry"`
	Cluster  string `json:"cluster,omitempty"`
	// Reason is registry.PendingReason's String.
	Reason string `json:"reason"`
	// Kind is the kind of object whose informer has not listed.
	Kind string `json:"kind,omitempty"`
}

// sync answers /sync for a registry that is a registry.Reader and a
// registry.SyncReporter (every registry of meshreg and the aggregate);
// 404 for another.
func (h *handler) sync(w http.ResponseWriter, _ *http.Request) {
	rd, ok := h.reg.(registry.Reader)
	sr, ok2 := h.reg.(registry.SyncReporter)
	if !ok || !ok2 {
		http.Error(w, "this registry does not report its sync", http.StatusNotFound)
		return
	}
	out := Sync{Synced: rd.HasSynced(), Pending: []SyncPending{}}
	for _, p := range sr.PendingSync() {
		who := "aggregate"
		if p.Shard != (model.ShardKey{}) {
			who = p.Shard.Provider.String()
		}
		out.Pending = append(out.Pending, SyncPending{Registry: who, Cluster: string(p.Shard.Cluster), Reason: p.Reason.String(), Kind: p.Kind})
	}
	h.write(w, out)
}
