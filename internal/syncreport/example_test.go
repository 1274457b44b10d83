package syncreport_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/internal/syncreport"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A registry whose EndpointSlice informer has not listed is reported once
// per interval; Watch returns once nothing is pending.
func ExampleWatch() {
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: "east"}
	var calls atomic.Int32
	pending := func() []registry.Pending {
		if calls.Add(1) > 2 {
			return nil // synced at the third look
		}
		return []registry.Pending{{Shard: shard, Reason: registry.PendingList, Kind: "EndpointSlice"}}
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "waited" {
				return slog.Attr{} // they vary from run to run
			}
			return a
		},
	}))
	syncreport.Watch(context.Background(), log, time.Millisecond, pending)
	fmt.Println("looked", calls.Load(), "times")
	// Output:
	// level=WARN msg="initial sync is slow" pending="[Kubernetes/east: initial list of EndpointSlice]"
	// level=WARN msg="initial sync is slow" pending="[Kubernetes/east: initial list of EndpointSlice]"
	// looked 3 times
}
