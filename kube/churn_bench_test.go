package kube_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/bench"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
)

var (
	churnProfile = flag.String("kube.churnprofile", "", "BenchmarkChurnLarge: write a CPU profile of each sub-benchmark's loop (not its setup) to this file plus .floor or .kube")
	churnNoGC    = flag.Bool("kube.churnnogc", false, "BenchmarkChurnLarge: turn the garbage collector off during the loop, so that whether a cycle falls in it does not decide the figure")
)

// BenchmarkChurnLarge is the harness's churn at the large preset (10,000
// services × 10 endpoints), in process: alternately one endpoint's
// readiness flipped in a slice and one label changed on a pod, each
// written through the fake clientset and waited for, for the floor (bare
// informers, reporting the update) and for a kube.Controller (its
// endpoints event). cpu-ns/op is the process CPU time per change, writes
// included; -kube.churnprofile profiles the loop alone, and
// -kube.churnnogc keeps the garbage collector out of it. The setup takes
// ~10 s per sub-benchmark.
func BenchmarkChurnLarge(b *testing.B) {
	b.Run("floor", func(b *testing.B) { churnLarge(b, true) })
	b.Run("kube", func(b *testing.B) { churnLarge(b, false) })
}

func churnLarge(b *testing.B, floor bool) {
	sc := bench.Generate(bench.Config{Services: 10000, EndpointsPerService: 10})
	client := fake.NewSimpleClientset(sc.KubeObjects()...)
	type ref struct{ ns, name string }
	var slices, pods []ref
	for _, s := range sc.Slices {
		slices = append(slices, ref{s.Namespace, s.Name})
	}
	for _, p := range sc.Pods {
		pods = append(pods, ref{p.Namespace, p.Name})
	}
	sc = nil // the tracker holds its own copies

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var armed atomic.Bool
	events := make(chan struct{}, 16)
	report := func() {
		if armed.Load() {
			events <- struct{}{}
		}
	}
	if floor {
		f := informers.NewSharedInformerFactory(client, 0)
		for _, in := range []cache.SharedIndexInformer{
			f.Core().V1().Services().Informer(), f.Discovery().V1().EndpointSlices().Informer(), f.Core().V1().Pods().Informer(),
		} {
			if _, err := in.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
				if _, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
					report()
				}
			}}); err != nil {
				b.Fatal(err)
			}
		}
		f.Start(ctx.Done())
		f.WaitForCacheSync(ctx.Done())
		defer func() { cancel(); f.Shutdown() }()
	} else {
		c, err := kube.New(client, kube.Options{ClusterID: bench.Cluster})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(registry.EndpointsEvent) { report() }})()
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		defer func() { cancel(); <-done }()
		for !c.HasSynced() || !c.Idle() {
			time.Sleep(time.Millisecond)
		}
	}
	runtime.GC()
	if *churnNoGC {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	}
	armed.Store(true)
	if *churnProfile != "" {
		name := *churnProfile + map[bool]string{true: ".floor", false: ".kube"}[floor]
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	for i := 0; b.Loop(); i++ {
		var err error
		if i%2 == 0 {
			s := slices[(i*7919)%len(slices)]
			err = flipReadiness(ctx, client, s.ns, s.name, i)
		} else {
			p := pods[(i*104729)%len(pods)]
			err = relabelPod(ctx, client, p.ns, p.name, i)
		}
		if err != nil {
			b.Fatal(err)
		}
		select {
		case <-events:
		case <-time.After(5 * time.Second):
			b.Fatal("no event for the change")
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func flipReadiness(ctx context.Context, client kubernetes.Interface, ns, name string, i int) error {
	api := client.DiscoveryV1().EndpointSlices(ns)
	s, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cond := &s.Endpoints[i%len(s.Endpoints)].Conditions
	ready := cond.Ready != nil && !*cond.Ready
	cond.Ready, cond.Serving = &ready, &ready
	_, err = api.Update(ctx, s, metav1.UpdateOptions{})
	return err
}

func relabelPod(ctx context.Context, client kubernetes.Interface, ns, name string, i int) error {
	api := client.CoreV1().Pods(ns)
	p, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	labels := make(map[string]string, len(p.Labels)+1)
	for k, v := range p.Labels {
		labels[k] = v
	}
	labels["bench.meshreg.io/generation"] = strconv.Itoa(i)
	p.Labels = labels
	_, err = api.Update(ctx, p, metav1.UpdateOptions{})
	return err
}

// processCPU is the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
