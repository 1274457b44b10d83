package proxyview_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
)

// A proxy on network west sees a service's west endpoint directly and its
// east endpoint through east's gateway, and does not see a service
// private to another namespace.
func Example() {
	reg, err := memory.New(memory.Options{ClusterID: "west"})
	if err != nil {
		panic(err)
	}
	echo := memory.Service("echo", "shared").Port("grpc", 8080).Cluster("west").VIP("10.96.0.7").Build()
	secret := memory.Service("secret", "payments").Port("grpc", 8080).ExportTo(".").Build()
	reg.AddService(echo, secret)
	reg.SetEndpoints(echo.Key(),
		memory.Endpoint("10.0.0.1", 8080).Port("grpc").Cluster("west").Network("west").IstioTLS().Build(),
		memory.Endpoint("10.1.0.1", 8080).Port("grpc").Cluster("east").Network("east").IstioTLS().Build())
	reg.SetNetworkGateways(model.NetworkGateway{Network: "east", Cluster: "east", Address: "192.0.2.1", Port: 15443})

	view, err := proxyview.New(reg, proxyview.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reg.Run(ctx)
	go view.Run(ctx)
	snap := view.Snapshot()
	for !snap.Synced() {
		<-snap.Superseded()
		snap = view.Snapshot()
	}

	proxy := &proxyview.Proxy{
		Namespace: "frontend", Cluster: "west", Network: "west",
		IPs: []netip.Addr{netip.MustParseAddr("10.0.0.9")},
	}
	for _, svc := range snap.Services(proxy) {
		fmt.Println(svc.Hostname, snap.Addresses(proxy, svc))
		for _, le := range snap.Endpoints(proxy, svc.Key(), "grpc") {
			for _, ep := range le.Endpoints {
				via := "direct"
				if ep.Gateway != nil {
					via = "gateway of " + string(ep.Gateway.Network)
				}
				fmt.Printf("  %s:%d weight %d, %s\n", ep.Address, ep.Port, ep.Weight, via)
			}
		}
	}
	// Output:
	// echo.shared.svc.cluster.local [10.96.0.7/32]
	//   10.0.0.1:8080 weight 1, direct
	//   192.0.2.1:15443 weight 1, gateway of east
}
