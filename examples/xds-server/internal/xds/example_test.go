package xds_test

import (
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/examples/xds-server/internal/xds"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
)

// A proxy's endpoints of one service port, as proxyview gives them,
// become a ClusterLoadAssignment: one locality per group, with the
// group's weight; each endpoint with its weight and health. The second
// locality's workloads are on a network the proxy does not reach: their
// gateway stands for them, with the sum of their weights.
func ExampleLoadAssignment() {
	at := func(ip string, port, w uint32, h model.HealthStatus) proxyview.Endpoint {
		return proxyview.Endpoint{Address: netip.MustParseAddr(ip), Port: port, Weight: w, Health: h}
	}
	gw := &model.NetworkGateway{Network: "net-west", Address: "192.0.2.10", Port: 15443}
	behind := at("192.0.2.10", 15443, 2, model.Healthy)
	behind.Gateway = gw
	cla := xds.LoadAssignment("echo.default.svc.cluster.local", 8080, []proxyview.LocalityEndpoints{
		{Locality: model.ParseLocality("us-east1/us-east1-b"), Weight: 4, Endpoints: []proxyview.Endpoint{
			at("10.0.0.1", 9000, 1, model.Healthy), at("10.0.0.2", 9000, 3, model.Draining),
		}},
		{Locality: model.ParseLocality("us-west1/us-west1-a"), Weight: 2, Endpoints: []proxyview.Endpoint{behind}},
	}, xds.GRPC)
	fmt.Println(cla.GetClusterName())
	for _, loc := range cla.GetEndpoints() {
		l := loc.GetLocality()
		fmt.Printf("  %s/%s weight=%d\n", l.GetRegion(), l.GetZone(), loc.GetLoadBalancingWeight().GetValue())
		for _, lb := range loc.GetLbEndpoints() {
			sa := lb.GetEndpoint().GetAddress().GetSocketAddress()
			fmt.Printf("    %s:%d %s weight=%d\n", sa.GetAddress(), sa.GetPortValue(), lb.GetHealthStatus(), lb.GetLoadBalancingWeight().GetValue())
		}
	}
	// Output:
	// outbound|8080||echo.default.svc.cluster.local
	//   us-east1/us-east1-b weight=4
	//     10.0.0.1:9000 HEALTHY weight=1
	//     10.0.0.2:9000 DRAINING weight=3
	//   us-west1/us-west1-a weight=2
	//     192.0.2.10:15443 HEALTHY weight=2
}
