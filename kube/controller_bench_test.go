package kube_test

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/internal/bench"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
)

// benchDeliveries runs a controller over sc's objects and delivers the
// versions of one object in turn, each as a watch event (no API write),
// waiting for the controller's endpoints event after each. Consecutive
// versions must differ, so that each delivery is a change. What it
// measures is the controller's cost of a change: informer, transform,
// conversion, store compare and index, notifier.
func benchDeliveries(b *testing.B, sc *bench.Scenario, resource string, versions []k8sruntime.Object) {
	client := fake.NewSimpleClientset(sc.KubeObjects()...)
	tap := bench.TapWatches(client)
	c, err := kube.New(client, kube.Options{ClusterID: bench.Cluster})
	if err != nil {
		b.Fatal(err)
	}
	// The initial conversion publishes every service's endpoints to this
	// subscriber; only events after armed count.
	var armed atomic.Bool
	events := make(chan struct{}, 16)
	unsub := c.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(registry.EndpointsEvent) {
		if armed.Load() {
			events <- struct{}{}
		}
	}})
	defer unsub()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for !c.Idle() {
		time.Sleep(time.Millisecond)
	}
	armed.Store(true)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := tap.Modify(resource, versions[i%len(versions)]); err != nil {
			b.Fatal(err)
		}
		select {
		case <-events:
		case <-time.After(5 * time.Second):
			b.Fatal("no endpoints event")
		}
	}
}

// BenchmarkControllerSliceChange is one endpoint's readiness flipping in
// the only slice of a service. The cost grows with the slice, which is
// read, but should not grow faster.
func BenchmarkControllerSliceChange(b *testing.B) {
	for _, n := range []int{25, 100} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			sc := bench.Generate(bench.Config{Services: 20, EndpointsPerService: n})
			versions := make([]k8sruntime.Object, 2)
			for i := range versions {
				s := sc.Slices[7].DeepCopy()
				ready := i == 1
				s.Endpoints[3].Conditions.Ready, s.Endpoints[3].Conditions.Serving = &ready, &ready
				s.ResourceVersion = strconv.Itoa(1<<40 + i)
				versions[i] = s
			}
			benchDeliveries(b, sc, "endpointslices", versions)
		})
	}
}

// BenchmarkControllerPodLabelChange is a label of one pod changing: the
// pod's workload and the pod's endpoints are rewritten. A pod's change
// should not cost more in a larger service.
func BenchmarkControllerPodLabelChange(b *testing.B) {
	for _, n := range []int{25, 1000} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			sc := bench.Generate(bench.Config{Services: 4, EndpointsPerService: n})
			versions := make([]k8sruntime.Object, 2)
			for i := range versions {
				p := sc.Pods[len(sc.Pods)/2].DeepCopy()
				p.Labels = maps.Clone(p.Labels)
				p.Labels["bench.meshreg.io/generation"] = strconv.Itoa(i)
				p.ResourceVersion = strconv.Itoa(1<<40 + i)
				versions[i] = p
			}
			benchDeliveries(b, sc, "pods", versions)
		})
	}
}
