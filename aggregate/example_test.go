package aggregate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// Two clusters serve the same Kubernetes Service: the aggregate answers
// with one service carrying both clusters' VIPs, and keeps endpoints per
// cluster.
func Example() {
	east := memory.New(memory.Options{Cluster: "east"})
	west := memory.New(memory.Options{Cluster: "west"})
	for _, c := range []struct {
		reg     *memory.Registry
		vip, ip string
	}{{east, "10.96.0.10", "10.1.0.1"}, {west, "10.97.0.10", "10.2.0.1"}} {
		svc := memory.Service("reviews", "default").Port("http", 9080).VIP(c.vip).Cluster(c.reg.Cluster()).Build()
		c.reg.AddService(svc)
		c.reg.SetEndpoints(svc.Key(), memory.Endpoint(c.ip, 9080).Port("http").Cluster(c.reg.Cluster()).Build())
	}

	agg := aggregate.New(aggregate.Options{})
	_ = agg.Add(east)
	_ = agg.Add(west)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- agg.Run(ctx) }()
	for !agg.HasSynced() {
		time.Sleep(time.Millisecond)
	}

	svc := agg.GetService("reviews.default.svc.cluster.local")
	fmt.Println(svc.Hostname, svc.Addresses["east"], svc.Addresses["west"])
	for _, ep := range agg.Endpoints(svc.Key(), registry.EndpointQuery{}) {
		fmt.Println(ep.Cluster, ep.Address())
	}
	fmt.Println("west only:", len(agg.Endpoints(svc.Key(), registry.EndpointQuery{Cluster: "west"})))
	cancel()
	<-done
	// Output:
	// reviews.default.svc.cluster.local [10.96.0.10/32] [10.97.0.10/32]
	// east 10.1.0.1
	// west 10.2.0.1
	// west only: 1
}

// Network gateways: a cluster's east-west gateway and one the mesh
// networks give by address, in one sorted list.
func ExampleController_NetworkGateways() {
	mesh, err := aggregate.ParseMeshNetworks([]byte(`
networks:
  vm-network:
    gateways:
    - address: 192.0.2.1
      port: 15443
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	east := memory.New(memory.Options{Cluster: "east"})
	east.SetNetworkGateways(model.NetworkGateway{Network: "east-network", Address: "203.0.113.7", Port: 15443, Source: model.GatewayFromService})

	agg := aggregate.New(aggregate.Options{MeshNetworks: mesh})
	_ = agg.Add(east)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- agg.Run(ctx) }()
	for !agg.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, gw := range agg.NetworkGateways() {
		fmt.Println(gw, gw.Source)
	}
	cancel()
	<-done
	// Output:
	// east-network/east/203.0.113.7:15443 Service
	// vm-network//192.0.2.1:15443 MeshNetworks
}
