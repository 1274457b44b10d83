package aggregate

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// BenchmarkMemberEndpointsChange is the aggregate's cost of one member's
// endpoints event for a service of n addresses on two ports, from the
// member's store to the aggregate's endpoints event: the hand-off to the
// aggregate's subscription, the merge, the aggregate's store and its
// event. The member's list alternates between two versions: "flip", one
// endpoint replaced by another of other health at its place (a readiness
// flip), and "scale", the endpoints of the middle address left out and
// back (a scale-down and up).
func BenchmarkMemberEndpointsChange(b *testing.B) {
	for _, change := range []string{"flip", "scale"} {
		for _, n := range []int{25, 1000} {
			b.Run(fmt.Sprintf("%s/endpoints=%d", change, n), func(b *testing.B) {
				f := newFake(model.Kubernetes, "cluster-a")
				svc := f.service("reviews", "default", httpPort, grpcPort)
				var full []*model.Endpoint
				for i := range n {
					ip := netip.AddrFrom4([4]byte{10, 244, byte(i >> 8), byte(i)})
					for _, p := range svc.Ports {
						full = append(full, &model.Endpoint{
							Addresses: []netip.Addr{ip}, Port: p.Port, ServicePortName: p.Name,
							Cluster: f.shard.Cluster, Health: model.Healthy,
						})
					}
				}
				slices.SortFunc(full, model.CompareEndpoints)
				other := slices.Clone(full)
				mid := full[len(full)/4].Addresses[0] // in the first port's half
				switch change {
				case "flip":
					i := slices.IndexFunc(other, func(ep *model.Endpoint) bool { return ep.Addresses[0] == mid })
					ep := *other[i]
					ep.Health = model.Unhealthy
					other[i] = &ep
				case "scale":
					other = slices.DeleteFunc(other, func(ep *model.Endpoint) bool { return ep.Addresses[0] == mid })
				}
				f.st.SetEndpoints(f.shard, svc.Key(), full)

				agg, err := New(Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := agg.Add(f); err != nil {
					b.Fatal(err)
				}
				events := make(chan struct{}, 1)
				defer agg.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(registry.EndpointsEvent) {
					select {
					case events <- struct{}{}:
					default:
					}
				}})()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- agg.Run(ctx) }()
				defer func() {
					cancel()
					if err := <-done; err != nil {
						b.Error(err)
					}
				}()
				for !agg.HasSynced() {
					time.Sleep(time.Millisecond)
				}
				<-events // the initial list's
				lists := [2][]*model.Endpoint{other, full}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					f.st.SetEndpoints(f.shard, svc.Key(), lists[i%2])
					select {
					case <-events:
					case <-time.After(5 * time.Second):
						b.Fatal("no endpoints event")
					}
				}
			})
		}
	}
}
