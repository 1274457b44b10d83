package xds_test

import (
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/examples/xds-server/internal/xds"
	"github.com/meshreg/meshreg/model"
)

// The endpoints of one service port become a ClusterLoadAssignment
// grouped by locality, with locality weights summed from the endpoints'
// (an unset endpoint weight counts as 1). The Terminating endpoint is
// left out.
func ExampleLoadAssignment() {
	port := model.Port{Name: "grpc", Port: 8080, Protocol: model.GRPC}
	at := func(ip, locality string, w uint32, h model.HealthStatus) *model.Endpoint {
		return &model.Endpoint{
			Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: 9000, ServicePortName: "grpc",
			Locality: model.ParseLocality(locality), Weight: w, Health: h,
		}
	}
	cla := xds.LoadAssignment("echo.default.svc.cluster.local", port, []*model.Endpoint{
		at("10.0.0.1", "us-east1/us-east1-b", 0, model.Healthy),
		at("10.0.0.2", "us-east1/us-east1-b", 3, model.Draining),
		at("10.0.1.1", "us-west1/us-west1-a", 0, model.Unhealthy),
		at("10.0.1.2", "us-west1/us-west1-a", 0, model.Terminating),
	})
	fmt.Println(cla.GetClusterName())
	for _, loc := range cla.GetEndpoints() {
		l := loc.GetLocality()
		fmt.Printf("  %s/%s weight=%d\n", l.GetRegion(), l.GetZone(), loc.GetLoadBalancingWeight().GetValue())
		for _, lb := range loc.GetLbEndpoints() {
			sa := lb.GetEndpoint().GetAddress().GetSocketAddress()
			weight := "unset"
			if w := lb.GetLoadBalancingWeight(); w != nil {
				weight = fmt.Sprint(w.GetValue())
			}
			fmt.Printf("    %s:%d %s weight=%s\n", sa.GetAddress(), sa.GetPortValue(), lb.GetHealthStatus(), weight)
		}
	}
	// Output:
	// outbound|8080||echo.default.svc.cluster.local
	//   us-east1/us-east1-b weight=4
	//     10.0.0.1:9000 HEALTHY weight=unset
	//     10.0.0.2:9000 DRAINING weight=3
	//   us-west1/us-west1-a weight=1
	//     10.0.1.1:9000 UNHEALTHY weight=unset
}
