package aggregate

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The aggregate announces its first sync with a SyncedEvent once its
// last registry syncs, with nobody asking HasSynced; a registry that
// times out lets it go too; a late subscriber gets the event after its
// initial state.
func TestSyncedEventWithoutPolling(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
	}{
		{"the last registry syncs", 0},
		{"the last registry times out", 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fast, slow := newFake(model.Kubernetes, "fast"), newFake(model.Kubernetes, "slow")
				slow.holdSync = true
				svc := slow.service("reviews", "ns", httpPort)
				agg, err := New(Options{SyncTimeout: tt.timeout})
				if err != nil {
					t.Fatal(err)
				}
				_ = agg.Add(fast)
				_ = agg.Add(slow)
				var synced atomic.Int32
				var sawService atomic.Bool
				defer agg.Subscribe(registry.HandlerFuncs{
					ServiceFunc: func(registry.ServiceEvent) { sawService.Store(true) },
					SyncedFunc: func(e registry.SyncedEvent) {
						if e.Initial {
							t.Error("a subscriber from before the sync got an Initial SyncedEvent")
						}
						if !sawService.Load() {
							t.Error("SyncedEvent before the state it completes")
						}
						synced.Add(1)
					},
				})()
				stop := run(t, agg)
				defer stop()
				time.Sleep(10 * time.Second)
				synctest.Wait()
				if n := synced.Load(); n != 0 {
					t.Fatalf("%d SyncedEvents while a registry has not synced", n)
				}
				if tt.timeout > 0 {
					time.Sleep(tt.timeout)
				} else {
					slow.st.MarkSynced()
				}
				synctest.Wait()
				if n := synced.Load(); n != 1 {
					t.Fatalf("%d SyncedEvents once every registry synced or timed out, want 1", n)
				}

				var late []string
				defer agg.Subscribe(registry.HandlerFuncs{
					ServiceFunc: func(e registry.ServiceEvent) { late = append(late, "service "+e.Service().Name) },
					SyncedFunc:  func(e registry.SyncedEvent) { late = append(late, "synced") },
				})()
				synctest.Wait()
				if want := "service " + svc.Name; len(late) != 2 || late[0] != want || late[1] != "synced" {
					t.Errorf("late subscriber got %q, want [%q synced]", late, want)
				}
			})
		})
	}
}
