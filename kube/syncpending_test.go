package kube

import (
	"context"
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A controller whose Pod informer cannot list says so: PendingSync names
// the Pod informer of its cluster, and only it once the others have
// listed; WaitSynced's error names it too.
func TestPendingSyncNamesTheInformerThatHasNotListed(t *testing.T) {
	f := newFakeCluster()
	f.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("pods refused")
	})
	c, err := New(f, Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: "east"}
	if got, want := c.PendingSync(), []registry.Pending{{Shard: shard, Reason: registry.PendingRun}}; !slices.Equal(got, want) {
		t.Errorf("PendingSync before Run = %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	want := []registry.Pending{{Shard: shard, Reason: registry.PendingList, Kind: "Pod"}}
	waitFor(t, "only the Pod informer pending", func() bool { return slices.Equal(c.PendingSync(), want) })
	expired, cancelWait := context.WithCancel(context.Background())
	cancelWait()
	var se *registry.SyncError
	if err := registry.WaitSynced(expired, c); !errors.As(err, &se) || !slices.Equal(se.Pending, want) {
		t.Errorf("WaitSynced = %v, want a *registry.SyncError naming %v", err, want)
	}
	if c.HasSynced() {
		t.Error("synced without the pods' list")
	}
}
