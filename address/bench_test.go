package address_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/internal/cputime"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/test/bench"
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
	reg.AddNamespace(c.Namespaces()...)
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

// changing runs a preset's registry and the index over it until the
// benchmark ends, and returns the registry and the index's changes after
// its initial state.
func changing(b *testing.B, preset string) (*memory.Registry, <-chan address.Change) {
	b.Helper()
	reg := benchSource(b, preset)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() { _ = reg.Run(ctx) }()
	idx, stop := runIndex(b, reg)
	b.Cleanup(stop)
	changed := make(chan address.Change, 1)
	b.Cleanup(idx.Subscribe(func(c address.Change) {
		if !c.Initial {
			changed <- c
		}
	}))
	return reg, changed
}

// BenchmarkPodChange flips one pod's readiness per operation and waits for
// the index's generation that holds it: the cost of one pod change
// through the index, snapshot included.
func BenchmarkPodChange(b *testing.B) {
	for _, preset := range []string{"medium", "large"} {
		b.Run(preset, func(b *testing.B) {
			reg, changed := changing(b, preset)
			ws := reg.Workloads()
			b.ReportAllocs()
			i := 0
			cpu := cputime.Process()
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
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkServiceChange adds a port to one Service per operation (a
// different one each time) and waits for the index's generation that
// holds it: the Service and the workloads it selects.
func BenchmarkServiceChange(b *testing.B) {
	reg, changed := changing(b, "large")
	svcs := reg.Services()
	b.ReportAllocs()
	i := 0
	cpu := cputime.Process()
	for b.Loop() {
		svc := *svcs[i%len(svcs)]
		svc.Ports = append(slices.Clone(svc.Ports), model.Port{Name: fmt.Sprintf("extra-%d", i), Port: uint32(30000 + i%20000), Protocol: model.TCP})
		i++
		reg.AddService(&svc)
		c := <-changed
		if len(c.Events) == 0 {
			b.Fatalf("no events for a Service's new port")
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkMetadataChange measures a change of the cluster metadata at
// the large preset (200 namespaces of 500 pods and 50 Services), through
// the registry and the index, per operation: a namespace's
// istio.io/use-waypoint label set or removed (its workloads and Services
// move to or off a waypoint), to the generation that holds it; a
// Gateway write that changes nothing the index reads (a label of its
// own), until the index has applied it; the address of the waypoint one
// namespace uses, to the generation that holds it.
func BenchmarkMetadataChange(b *testing.B) {
	reg := benchSource(b, "large")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = reg.Run(ctx) }()
	nss := reg.Namespaces()
	used := nss[len(nss)/2]
	// The waypoint admits every namespace: a namespace labelled moves
	// onto it.
	waypoint := &model.Gateway{Namespace: used.Name, Name: "wp", Class: "istio-waypoint",
		Labels: map[string]string{"istio.io/waypoint-for": "all"},
		Listeners: []model.GatewayListener{{Name: "mesh", Port: 15008, Protocol: "HBONE",
			AllowedRoutes: model.AllowedRoutes{From: model.FromAll}}},
		StatusAddresses: []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.255.0.1"}}}
	reg.AddGateway(waypoint)
	labelled := func(ns *model.Namespace, on bool) *model.Namespace {
		out := *ns
		out.Labels = maps.Clone(ns.Labels)
		if on {
			out.Labels = map[string]string{"istio.io/use-waypoint": "wp", "istio.io/use-waypoint-namespace": used.Name}
			maps.Copy(out.Labels, ns.Labels)
		}
		return &out
	}
	reg.AddNamespace(labelled(used, true))
	idx, stop := runIndex(b, reg)
	defer stop()
	changed := make(chan address.Change, 1)
	defer idx.Subscribe(func(c address.Change) {
		if !c.Initial {
			changed <- c
		}
	})()
	for len(changed) == 0 && !(reg.Settled() && idx.Settled()) {
		runtime.Gosched()
	}
	for len(changed) > 0 {
		<-changed
	}
	const perNamespace = 550 // 500 pods, 50 Services

	others := slices.DeleteFunc(slices.Clone(nss), func(ns *model.Namespace) bool { return ns.Name == used.Name })
	b.Run("namespace-label", func(b *testing.B) {
		on := map[string]bool{}
		i := 0
		for b.Loop() {
			ns := others[i%len(others)]
			i++
			on[ns.Name] = !on[ns.Name]
			reg.AddNamespace(labelled(ns, on[ns.Name]))
			if c := <-changed; len(c.Events) != perNamespace {
				b.Fatalf("%d events, want the namespace's %d", len(c.Events), perNamespace)
			}
		}
		b.StopTimer()
		for _, ns := range others { // every namespace off the waypoint again
			if on[ns.Name] {
				reg.AddNamespace(labelled(ns, false))
				<-changed
			}
		}
	})
	b.Run("gateway-noop", func(b *testing.B) {
		gen := idx.Snapshot().Generation()
		i := 0
		for b.Loop() {
			gw := *waypoint
			gw.Labels = map[string]string{"istio.io/waypoint-for": "all", "write": strconv.Itoa(i)}
			i++
			reg.AddGateway(&gw)
			for !reg.Settled() || !idx.Settled() {
				runtime.Gosched()
			}
		}
		if g := idx.Snapshot().Generation(); g != gen {
			b.Fatalf("generation %d after writes that change nothing, was %d", g, gen)
		}
	})
	b.Run("waypoint-address", func(b *testing.B) {
		i := 0
		for b.Loop() {
			gw := *waypoint
			i++
			gw.StatusAddresses = []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.255.0." + strconv.Itoa(1+i%2)}}
			reg.AddGateway(&gw)
			if c := <-changed; len(c.Events) != perNamespace {
				b.Fatalf("%d events, want the %d of the namespace that uses the waypoint", len(c.Events), perNamespace)
			}
		}
	})
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
