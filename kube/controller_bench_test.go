package kube_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/internal/bench"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
)

// BenchmarkControllerSliceChange is one endpoint's readiness flipping in a
// 25-endpoint slice of a 200-service cluster, from the API write to the
// controller's endpoints event: informer, conversion of the service's
// endpoints, store compare and index, notifier. It includes the fake
// clientset's write (a deep copy per watcher).
func BenchmarkControllerSliceChange(b *testing.B) {
	sc := bench.Generate(bench.Config{Services: 200, EndpointsPerService: 25})
	client := fake.NewSimpleClientset(sc.KubeObjects()...)
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
	slices := client.DiscoveryV1().EndpointSlices(sc.Slices[7].Namespace)
	name := sc.Slices[7].Name
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s, err := slices.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ready := i%2 == 1
		s.Endpoints[3].Conditions.Ready, s.Endpoints[3].Conditions.Serving = &ready, &ready
		if _, err := slices.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		select {
		case <-events:
		case <-time.After(5 * time.Second):
			b.Fatal("no endpoints event")
		}
	}
}
