package reliability_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"go.uber.org/goleak"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/serviceentry"
	"github.com/meshreg/meshreg/test/reliability"
)

// runner is what a Run/stop cycle needs.
type runner interface {
	Run(context.Context) error
	HasSynced() bool
}

// cycle runs r until it has synced, stops it, and waits for Run to return.
func cycle(t *testing.T, r runner) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for !r.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatalf("%T did not sync", r)
		}
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("%T: Run: %v", r, err)
	}
}

// TestRunStopCyclesLeaveNoGoroutines runs and stops every kind of
// controller many times, each over some objects, and then finds no
// goroutine left but those that were there before.
func TestRunStopCyclesLeaveNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const cycles = 10
	world := reliability.Generator{}.Sequence(99).Final()
	for i := range cycles {
		// kube: a controller over a fake clientset with objects.
		client := kubefake.NewClientset()
		(&tracker{client: client, applied: map[string]string{}}).apply(t, world, "b")
		kc, err := kube.New(client, kubeOptions())
		if err != nil {
			t.Fatal(err)
		}
		cycle(t, kc)

		// serviceentry: a controller over a static source.
		objs, err := world.Decode("a")
		if err != nil {
			t.Fatal(err)
		}
		src, _ := serviceentry.NewStaticSource()
		for _, o := range objs {
			_ = src.Upsert(o) // Kubernetes objects are refused; fine
		}
		se, err := serviceentry.New(src, serviceentry.Options{ClusterID: "a"})
		if err != nil {
			t.Fatal(err)
		}
		cycle(t, se)

		// memory: a registry with a service.
		mem, err := memory.New(memory.Options{ClusterID: model.ClusterID(fmt.Sprint("m", i))})
		if err != nil {
			t.Fatal(err)
		}
		mem.AddService(memory.Service("s", "ns").Port("http", 80).Build())
		cycle(t, mem)

		// aggregate: manifests of both clusters, with a subscriber, and
		// a registry added and one removed while it runs.
		h, err := reliability.Start(world)
		if err != nil {
			t.Fatal(err)
		}
		unsub := h.Built.Aggregate.Subscribe(registry.HandlerFuncs{})
		extra, err := memory.New(memory.Options{ClusterID: "extra"})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Built.Aggregate.Add(extra); err != nil {
			t.Fatal(err)
		}
		if err := h.WaitSynced(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := h.Built.Aggregate.Remove(model.Kubernetes, "extra"); err != nil {
			t.Fatal(err)
		}
		unsub()
		if err := h.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRemovedRegistryIsCollected adds a registry holding a few thousand
// endpoints to a running aggregate, removes it, drops every reference, and
// shows through a weak pointer that the garbage collector frees it: the
// aggregate keeps nothing of a registry it no longer has.
func TestRemovedRegistryIsCollected(t *testing.T) {
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agg.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// The aggregate has subscribers of its own, which saw the removed
	// registry's objects; they must not pin it either.
	defer agg.Subscribe(registry.HandlerFuncs{})()

	for _, kind := range []string{"memory", "kube"} {
		t.Run(kind, func(t *testing.T) {
			var alive func() bool
			var cluster model.ClusterID
			func() {
				var r registry.Registry
				switch kind {
				case "memory":
					m, err := memory.New(memory.Options{ClusterID: "big"})
					if err != nil {
						t.Fatal(err)
					}
					for i := range 200 {
						svc := memory.Service(fmt.Sprint("s", i), "ns").Port("http", 80).Build()
						m.AddService(svc)
						var eps []*model.Endpoint
						for j := range 20 {
							eps = append(eps, memory.Endpoint(fmt.Sprintf("10.%d.%d.1", i, j), 8080).Port("http").Build())
						}
						m.SetEndpoints(svc.Key(), eps...)
					}
					r = m
					wp := weak.Make(m)
					alive = func() bool { return wp.Value() != nil }
				case "kube":
					client := kubefake.NewClientset()
					world := reliability.Generator{}.Sequence(5).Final()
					(&tracker{client: client, applied: map[string]string{}}).apply(t, world, "b")
					opts := kubeOptions()
					opts.ClusterID = "bigkube"
					kc, err := kube.New(client, opts)
					if err != nil {
						t.Fatal(err)
					}
					r = kc
					wp := weak.Make(kc)
					alive = func() bool { return wp.Value() != nil }
				}
				cluster = r.Cluster()
				if err := agg.Add(r); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(20 * time.Second)
				for !agg.HasSynced() || !r.HasSynced() {
					if time.Now().After(deadline) {
						t.Fatal("did not sync")
					}
					time.Sleep(2 * time.Millisecond)
				}
				if len(agg.Services()) == 0 && kind == "memory" {
					t.Fatal("no services merged")
				}
				if err := agg.Remove(r.Provider(), cluster); err != nil {
					t.Fatal(err)
				}
			}()
			for i := 0; i < 50 && alive(); i++ {
				runtime.GC()
				time.Sleep(10 * time.Millisecond)
			}
			if alive() {
				t.Fatalf("registry of cluster %s still reachable after removal", cluster)
			}
			for _, s := range agg.Services() {
				if eps := agg.Endpoints(s.Key(), registry.EndpointQuery{}); len(eps) > 0 {
					for _, ep := range eps {
						if ep.Cluster == cluster {
							t.Fatalf("endpoint of removed cluster %s remains", cluster)
						}
					}
				}
			}
		})
	}
}
