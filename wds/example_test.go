package wds_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/wds"
)

// A registry's addresses served over delta xDS on a loopback port, and
// what a wildcard client, as ztunnel is, receives.
func Example() {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		panic(err)
	}
	reg.AddService(memory.Service("reviews", "default").Port("http", 9080).VIP("10.96.0.10").
		Selector(map[string]string{"app": "reviews"}).Build())
	reg.AddWorkload(memory.Workload("reviews-v1", "default").Address("10.1.0.1").
		Labels(map[string]string{"app": "reviews"}).Build())

	idx, err := address.New(reg, address.Options{})
	if err != nil {
		panic(err)
	}
	srv, err := wds.New(idx, wds.Options{})
	if err != nil {
		panic(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{reg.Run, idx.Run, srv.Run} {
		wg.Go(func() { _ = run(ctx) })
	}
	wg.Go(func() { _ = gs.Serve(lis) })
	defer func() {
		cancel()
		gs.Stop()
		wg.Wait()
	}()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	stream, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		panic(err)
	}
	// No name subscribed: every address.
	if err := stream.Send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL}); err != nil {
		panic(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		panic(err)
	}
	for _, r := range resp.Resources {
		a := &workloadapi.Address{}
		if err := proto.Unmarshal(r.Resource.Value, a); err != nil {
			panic(err)
		}
		if w := a.GetWorkload(); w != nil {
			ip, _ := netip.AddrFromSlice(w.Addresses[0])
			fmt.Println("workload", r.Name, ip, w.Status)
		} else {
			fmt.Println("service ", r.Name, len(a.GetService().Ports), "port")
		}
	}
	// Output:
	// workload cluster-1//Pod/default/reviews-v1 10.1.0.1 HEALTHY
	// service  default/reviews.default.svc.cluster.local 1 port
}
