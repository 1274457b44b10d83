package bench_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/test/bench"
)

// BenchmarkFloorSliceChange is the floor's side of
// kube.BenchmarkControllerSliceChange: the same write to the same
// scenario, seen by a bare EndpointSlice informer's no-op update handler.
// The difference between the two is the registry's cost per change.
func BenchmarkFloorSliceChange(b *testing.B) {
	sc := bench.Generate(bench.Config{Services: 200, EndpointsPerService: 25})
	client := fake.NewSimpleClientset(sc.KubeObjects()...)
	factory := informers.NewSharedInformerFactory(client, 0)
	updates := make(chan struct{}, 16)
	reg, err := factory.Discovery().V1().EndpointSlices().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) { updates <- struct{}{} },
	})
	if err != nil {
		b.Fatal(err)
	}
	factory.Core().V1().Services().Informer()
	factory.Core().V1().Pods().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	for !reg.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	ctx := context.Background()
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
		case <-updates:
		case <-time.After(5 * time.Second):
			b.Fatal("no update")
		}
	}
}
