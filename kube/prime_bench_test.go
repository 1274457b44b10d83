package kube_test

import (
	"runtime"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/internal/cputime"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/bench"
)

// BenchmarkPrime is the initial conversion alone (what Run does once the
// informers have delivered their lists) of the bench harness's medium
// and large scenarios: the part of the initial sync that follows the
// last list up to HasSynced, with no informer and no clientset. Each
// iteration converts into a new controller with one subscriber, loaded
// (untimed) with the objects through the informers' transforms; the
// garbage collector runs before each. cpu-ns/op is the process's CPU time, all goroutines': the
// conversion spreads over Options.InitialSyncWorkers (GOMAXPROCS).
func BenchmarkPrime(b *testing.B) {
	for _, preset := range []string{"medium", "large"} {
		b.Run(preset, func(b *testing.B) {
			objs := bench.Generate(bench.Presets[preset]).KubeObjects()
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				c, err := kube.New(fake.NewSimpleClientset(), kube.Options{ClusterID: bench.Cluster, DomainSuffix: bench.DomainSuffix})
				if err != nil {
					b.Fatal(err)
				}
				if err := kube.LoadUnstarted(c, objs); err != nil {
					b.Fatal(err)
				}
				unsubscribe := c.Subscribe(registry.HandlerFuncs{})
				runtime.GC()
				cpu0 := cputime.Process()
				b.StartTimer()
				n, finish := kube.Prime(c)
				for !c.HasSynced() {
					runtime.Gosched()
				}
				b.StopTimer()
				cpu += cputime.Process() - cpu0
				finish()
				unsubscribe()
				if n < len(objs)/2 {
					b.Fatalf("%d conversions of %d objects", n, len(objs))
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
