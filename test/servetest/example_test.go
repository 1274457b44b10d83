package servetest_test

import (
	"context"
	"fmt"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/test/servetest"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// A ztunnel's first response from the stack over a memory registry.
func Example() {
	reg, _ := memory.New(memory.Options{ClusterID: "c1"})
	reg.AddWorkload(memory.Workload("web-1", "shop").Address("10.0.0.1").Build())
	s, err := servetest.Start(reg, xds.Options{}, wds.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := s.ADS.DeltaAggregatedResources(ctx)
	if err != nil {
		panic(err)
	}
	_ = stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL})
	resp, err := stream.Recv()
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.GetResources()[0].GetName())
	// Output:
	// c1//Pod/shop/web-1
}
