package address_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/internal/bench"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

// benchSource is a memory registry holding what the kube controller makes
// of a bench preset: its services and workloads. The index's cost is
// then measured without the controller's.
func benchSource(b *testing.B, preset string) *memory.Registry {
	b.Helper()
	objs := bench.Generate(bench.Presets[preset]).KubeObjects()
	c, err := kube.New(fake.NewSimpleClientset(objs...), kube.Options{ClusterID: bench.Cluster, DomainSuffix: bench.DomainSuffix})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for !c.HasSynced() {
		time.Sleep(10 * time.Millisecond)
	}
	reg, err := memory.New(memory.Options{ClusterID: bench.Cluster})
	if err != nil {
		b.Fatal(err)
	}
	reg.AddService(c.Services()...)
	reg.AddWorkload(c.Workloads()...)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return reg
}

func runIndex(b *testing.B, reg *memory.Registry) (*address.Index, func()) {
	b.Helper()
	idx, err := address.New(reg, address.Options{Debounce: -1})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = idx.Run(ctx); close(done) }()
	for !idx.HasSynced() {
		runtime.Gosched()
	}
	return idx, func() { cancel(); <-done }
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIndexInitial builds the index over a synced registry: the time
// to its first synced snapshot, and the heap the index holds per
// workload (heap-B/workload) once built.
func BenchmarkIndexInitial(b *testing.B) {
	for _, preset := range []string{"medium", "large"} {
		b.Run(preset, func(b *testing.B) {
			reg := benchSource(b, preset)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = reg.Run(ctx) }()
			workloads := len(reg.Workloads())
			var heap uint64
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				idx, stop := runIndex(b, reg)
				b.StopTimer()
				heap = heapInUse() - before
				if n := len(idx.Snapshot().Workloads()); n != workloads {
					b.Fatalf("%d workloads indexed, want %d", n, workloads)
				}
				stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(heap)/float64(workloads), "heap-B/workload")
		})
	}
}

// BenchmarkPodChange flips one pod's readiness per operation and waits for
// the index's generation that holds it: the cost of one pod change
// through the index, snapshot included.
func BenchmarkPodChange(b *testing.B) {
	for _, preset := range []string{"medium", "large"} {
		b.Run(preset, func(b *testing.B) {
			reg := benchSource(b, preset)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = reg.Run(ctx) }()
			idx, stop := runIndex(b, reg)
			defer stop()
			changed := make(chan address.Change, 1)
			defer idx.Subscribe(func(c address.Change) { changed <- c })()
			ws := reg.Workloads()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				w := ws[i%len(ws)].DeepCopy()
				if (i/len(ws))%2 == 0 {
					w.Endpoint.Health = model.Unhealthy
				}
				i++
				reg.AddWorkload(w)
				c := <-changed
				if len(c.Events) != 1 || !strings.HasSuffix(c.Events[0].Key, "/"+w.Name) {
					b.Fatalf("events %v", c.Events)
				}
			}
		})
	}
}

// BenchmarkSnapshot measures reading a snapshot: a lookup by address and
// by uid, and listing every key.
func BenchmarkSnapshot(b *testing.B) {
	reg := benchSource(b, "large")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = reg.Run(ctx) }()
	idx, stop := runIndex(b, reg)
	defer stop()
	snap := idx.Snapshot()
	ip := address.IPKey("", bench.PodIP(12345))
	b.Run("Lookup", func(b *testing.B) {
		for b.Loop() {
			if len(snap.Lookup(ip)) != 1 {
				b.Fatal("not found")
			}
		}
	})
	b.Run("Keys", func(b *testing.B) {
		for b.Loop() {
			snap.Keys()
		}
	})
}
