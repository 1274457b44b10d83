package kube_test

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/bench"
)

// versioned is an API object with its metadata.
type versioned interface {
	k8sruntime.Object
	metav1.Object
}

// benchDeliveries runs a controller over sc's objects and delivers two
// versions of one object in turn, version(0) and version(1), each as a
// watch event (no API write), waiting for the controller's endpoints
// event after each. The versions must differ, so that each delivery is a
// change. What it measures is the controller's cost of a change:
// informer, transform, conversion, store compare and index, notifier.
func benchDeliveries(b *testing.B, sc *bench.Scenario, resource string, version func(i int) versioned) {
	versions := make([]k8sruntime.Object, 2)
	for i := range versions {
		o := version(i)
		o.SetResourceVersion(strconv.Itoa(1<<40 + i))
		versions[i] = o
	}
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
	for !c.Settled() {
		time.Sleep(time.Millisecond)
	}
	armed.Store(true)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := tap.Modify(resource, versions[i%2]); err != nil {
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
// a slice of a service: its only slice up to 100 endpoints, one of ten
// at 1000. The cost grows with the slice, which is read, but should not
// grow faster, nor with the service's other slices.
func BenchmarkControllerSliceChange(b *testing.B) {
	for _, n := range []int{25, 100, 1000} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			sc := bench.Generate(bench.Config{Services: min(20, 20000/n), EndpointsPerService: n})
			benchDeliveries(b, sc, "endpointslices", func(i int) versioned {
				s := sc.Slices[7].DeepCopy()
				ready := i == 1
				s.Endpoints[3].Conditions.Ready, s.Endpoints[3].Conditions.Serving = &ready, &ready
				return s
			})
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
			benchDeliveries(b, sc, "pods", func(i int) versioned {
				p := sc.Pods[len(sc.Pods)/2].DeepCopy()
				p.Labels = maps.Clone(p.Labels)
				p.Labels["bench.meshreg.io/generation"] = strconv.Itoa(i)
				return p
			})
		})
	}
}

// BenchmarkControllerSliceScale is a slice losing its last endpoint and
// getting it back, as a scale-down and up do: a change of membership.
// It grows with the service, whose merged endpoints are walked beside
// the memo's and whose list is published anew, but not with a
// conversion of the service's endpoints.
func BenchmarkControllerSliceScale(b *testing.B) {
	for _, n := range []int{25, 1000} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			sc := bench.Generate(bench.Config{Services: min(20, 20000/n), EndpointsPerService: n})
			benchDeliveries(b, sc, "endpointslices", func(i int) versioned {
				s := sc.Slices[7].DeepCopy()
				if i == 0 { // the first delivery must be a change
					s.Endpoints = s.Endpoints[:len(s.Endpoints)-1]
				}
				return s
			})
		})
	}
}
