package aggregate

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
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

// Settled says when a change made to a member has reached the
// aggregate's subscribers: not while a subscriber still holds its event.
func TestSettled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, err := memory.New(memory.Options{ClusterID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(mem)
		stop := run(t, agg)
		defer stop()
		release := make(chan struct{})
		var got atomic.Int32
		defer agg.Subscribe(registry.HandlerFuncs{ServiceFunc: func(registry.ServiceEvent) {
			<-release
			got.Add(1)
		}})()
		synctest.Wait()
		if !agg.Settled() {
			t.Fatal("not settled with nothing changed")
		}
		mem.AddService(memory.Service("reviews", "default").Port("http", 80).Build())
		synctest.Wait() // the subscriber holds the add
		if agg.Settled() {
			t.Fatal("settled while a subscriber has not handled the change")
		}
		close(release)
		synctest.Wait()
		if !agg.Settled() || got.Load() != 1 {
			t.Fatalf("Settled %v with %d events handled, want true and 1", agg.Settled(), got.Load())
		}
	})
}
