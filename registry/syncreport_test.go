package registry_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// WaitSynced's error names what the registry waited for and wraps the
// context's error.
func TestWaitSyncedErrorNamesWhatIsPending(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "west"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	err = registry.WaitSynced(ctx, reg) // never run
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitSynced = %v, which does not wrap context.DeadlineExceeded", err)
	}
	var se *registry.SyncError
	want := []registry.Pending{{Shard: model.ShardKey{Provider: model.Kubernetes, Cluster: "west"}, Reason: registry.PendingRun}}
	if !errors.As(err, &se) || !slices.Equal(se.Pending, want) {
		t.Fatalf("WaitSynced = %#v, want a *registry.SyncError naming %v", err, want)
	}
	if got, wantMsg := err.Error(), "registry: not synced, waiting for Kubernetes/west: not running: context deadline exceeded"; got != wantMsg {
		t.Errorf("error = %q, want %q", got, wantMsg)
	}
}

// Pendings read as their registry, reason and kind, and sort by them.
func TestPendingStringAndOrder(t *testing.T) {
	east := model.ShardKey{Provider: model.External, Cluster: "east"}
	ps := []registry.Pending{
		{Shard: east, Reason: registry.PendingList, Kind: "WorkloadEntry"},
		{Reason: registry.PendingInitial},
		{Shard: east, Reason: registry.PendingList, Kind: "ServiceEntry"},
		{Shard: east, Reason: registry.PendingList, Kind: "ServiceEntry"},
	}
	var got []string
	for _, p := range registry.SortPending(ps) {
		got = append(got, p.String())
	}
	want := []string{"aggregate: initial state", "External/east: initial list of ServiceEntry", "External/east: initial list of WorkloadEntry"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}
