package bench

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

var (
	churnProfile = flag.String("churn.profile", "", "BenchmarkChurnLarge: write a CPU profile of each sub-benchmark's loop (not its setup) to this file plus .floor, .kube or .aggregate")
	churnNoGC    = flag.Bool("churn.nogc", false, "BenchmarkChurnLarge: turn the garbage collector off during the loop, so that whether a cycle falls in it does not decide the figure")
	churnPreset  = flag.String("churn.preset", "large", "BenchmarkChurnLarge: the preset to churn instead of large")
	churnStreamN = flag.Int("churn.stream", 2000, "BenchmarkChurnLarge: the number of distinct changes in the stream the loop repeats (the harness's 2,000); as many as -test.benchtime's count make every change's objects as cold as in the harness's single pass")
	churnDeliver = flag.Bool("churn.deliver", false, "BenchmarkChurnLarge: deliver each change to the system's watches instead of writing it to the clientset (the harness's delivered stream), so that cpu-ns/op is the system's alone")
)

// BenchmarkChurnLarge is the harness's churn stream at the large preset,
// in process, for each system over a clientset of its own: one change
// written at a time through the fake clientset and waited for (the
// floor's update handler, the registry's endpoints event). cpu-ns/op is
// the process CPU time per change, writes included; -churn.profile
// profiles the loop alone, and -churn.nogc keeps the garbage collector
// out of it. The sub-benchmark "writes" is the writes alone, with no
// system watching, on a clientset of its own: a system's share is its
// figure less that one. -churn.preset churns another preset. The setup
// takes ~10 s per system at large. -churn.deliver delivers the changes
// to the system's watches instead of writing them (see runDelivered):
// cpu-ns/op is then the system's own cost of a change, and the "writes"
// sub-benchmark is left out. The loop repeats a stream of 2,000 changes,
// whose objects are in the processor's caches after the first pass:
// -churn.stream sets its length. The sub-benchmark "floor-notify"
// (FloorNotify) is the floor handing each change to a subscriber as a
// registry does.
func BenchmarkChurnLarge(b *testing.B) {
	c, ok := Presets[*churnPreset]
	if !ok {
		b.Fatalf("-churn.preset: unknown preset %q", *churnPreset)
	}
	names := append(slices.Clone(Systems), FloorNotify, AggregateMetrics)
	if !*churnDeliver {
		names = append([]string{writesAlone}, names...)
	}
	for _, name := range names {
		b.Run(name, func(b *testing.B) { benchChurn(b, c, name) })
	}
}

// writesAlone names BenchmarkChurnLarge's sub-benchmark of the writes
// with no system running.
const writesAlone = "writes"

func benchChurn(b *testing.B, c Config, name string) {
	sc := Generate(c)
	client := fake.NewSimpleClientset(sc.KubeObjects()...)
	tap := TapWatches(client)
	if *churnStreamN < 1 {
		b.Fatalf("-churn.stream: %d changes", *churnStreamN)
	}
	stream := churnStream(sc, *churnStreamN)
	light := sc.light()
	sc = nil // the tracker holds its own copies

	ctx := context.Background()
	var seen <-chan string
	if name != writesAlone {
		sys, err := newSystem(name, client, light, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := sys.start(ctx); err != nil {
			b.Fatal(err)
		}
		defer sys.stop()
		for !sys.synced() {
			time.Sleep(time.Millisecond)
		}
		var unsink func()
		seen, unsink = sinkTo(sys)
		defer unsink()
	}
	w := &writer{client: client}

	runtime.GC()
	if *churnNoGC {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	}
	if *churnProfile != "" {
		f, err := os.Create(*churnProfile + "." + name)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	var res ChurnResult
	var ds []delivery // the stream's next pass, when delivered
	var building time.Duration
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		ch := stream[i%len(stream)]
		switch {
		case *churnDeliver:
			if i%len(stream) == 0 {
				b.StopTimer()
				t0 := cpuTime()
				var err error
				if ds, err = w.deliveries(ctx, stream); err != nil {
					b.Fatal(err)
				}
				building += cpuTime() - t0
				b.StartTimer()
			}
			d := ds[i%len(stream)]
			if err := tap.Modify(d.resource, d.obj); err != nil {
				b.Fatal(err)
			}
		default:
			if err := w.apply(ctx, ch); err != nil {
				b.Fatal(err)
			}
		}
		if name != writesAlone && !await(seen, ch.key(floorKeys(name)), &res) {
			b.Fatalf("%s: no report of change %d (%s/%s)", name, i, ch.ns, ch.name)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0-building)/float64(b.N), "cpu-ns/op")
}
