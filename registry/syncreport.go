package registry

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshreg/meshreg/model"
)

// What holds a registry's initial sync back, for the logs, the debug
// pages, the metrics and WaitSynced's error.

// DefaultSyncReportInterval is the default of the SyncReportInterval
// option of the kube and serviceentry controllers and the aggregate: how
// long a registry waits for its initial sync before it logs what holds
// it back, and how often it logs again while it waits.
const DefaultSyncReportInterval = 10 * time.Second

// SyncReporter is implemented by registries that can say what their
// initial sync waits for: the kube and serviceentry controllers, the
// in-memory registry, and the aggregate (over its registries). See
// Pending.
type SyncReporter interface {
	// PendingSync returns what the initial sync still waits for, sorted
	// (see ComparePending); nil once the registry has synced
	// (HasSynced).
	PendingSync() []Pending
}

// Pending is one thing a registry's initial sync waits for.
type Pending struct {
	// Shard is the registry that waits: its provider and cluster. The
	// zero ShardKey is the aggregate itself.
	Shard model.ShardKey
	// Reason is what it waits for.
	Reason PendingReason
	// Kind is, for PendingList, the kind of the objects whose informer
	// has not delivered its initial list ("Service", "EndpointSlice",
	// "Pod", "Node", "Namespace", "ServiceEntry", "WorkloadEntry", ...);
	// "" for the other reasons.
	Kind string
}

// PendingReason says what a registry's initial sync waits for.
type PendingReason uint8

// The reasons, in the order a registry's sync passes them.
const (
	// PendingRun: the registry has not been started (Run).
	PendingRun PendingReason = iota + 1
	// PendingList: an informer has not delivered its initial list. On a
	// live cluster: the list is large, the API server is slow or
	// unreachable, or the kind is not served (a CRD not installed). On a
	// fake clientset: see the kube and serviceentry package docs on
	// client-go's watch-list protocol.
	PendingList
	// PendingSource: a source that does not say which of its parts it
	// waits for (a serviceentry.Source of the caller's own, a registry
	// that is not a SyncReporter) has not synced.
	PendingSource
	// PendingInitial: the initial state is being converted, or its events
	// have not yet reached every subscriber (a handler that has not
	// returned holds the sync back).
	PendingInitial
	// PendingSettle: the aggregate waits for a registry to apply the
	// workloads handed to it from the other registries (registry.Settler).
	PendingSettle
)

// String returns "not running", "initial list", "source", "initial
// state" or "settling".
func (r PendingReason) String() string {
	switch r {
	case PendingRun:
		return "not running"
	case PendingList:
		return "initial list"
	case PendingSource:
		return "source"
	case PendingInitial:
		return "initial state"
	case PendingSettle:
		return "settling"
	}
	return fmt.Sprintf("PendingReason(%d)", uint8(r))
}

// String returns the registry, the reason and the kind: "Kubernetes/east:
// initial list of EndpointSlice", "aggregate: initial state".
func (p Pending) String() string {
	who := "aggregate"
	if p.Shard != (model.ShardKey{}) {
		who = p.Shard.String()
	}
	if p.Kind != "" {
		return who + ": " + p.Reason.String() + " of " + p.Kind
	}
	return who + ": " + p.Reason.String()
}

// ComparePending orders Pendings by shard (model.ShardKey.Compare; the
// aggregate's first), reason and kind.
func ComparePending(a, b Pending) int {
	if c := a.Shard.Compare(b.Shard); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Reason, b.Reason); c != 0 {
		return c
	}
	return cmp.Compare(a.Kind, b.Kind)
}

// SortPending sorts ps with ComparePending and drops duplicates.
func SortPending(ps []Pending) []Pending {
	slices.SortFunc(ps, ComparePending)
	return slices.Compact(ps)
}

// SyncError is WaitSynced's error when its context ends before the
// registry syncs: what the registry still waited for then, and the
// context's error, which it wraps (errors.Is(err,
// context.DeadlineExceeded) holds for a deadline).
type SyncError struct {
	// Pending is what the registry waited for; nil when it is not a
	// SyncReporter.
	Pending []Pending
	// Err is the context's error.
	Err error
}

// Error says what had not synced.
func (e *SyncError) Error() string {
	if len(e.Pending) == 0 {
		return "registry: not synced: " + e.Err.Error()
	}
	parts := make([]string, len(e.Pending))
	for i, p := range e.Pending {
		parts[i] = p.String()
	}
	return "registry: not synced, waiting for " + strings.Join(parts, "; ") + ": " + e.Err.Error()
}

// Unwrap returns the context's error.
func (e *SyncError) Unwrap() error { return e.Err }
