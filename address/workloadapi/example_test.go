package workloadapi_test

import (
	"fmt"
	"net/netip"

	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/address/workloadapi"
)

// Example builds the Address resource of one pod that backs one service,
// encodes it as it would travel in a delta xDS response, and decodes it
// again as ztunnel would.
func Example() {
	ip := netip.MustParseAddr("10.0.0.7")
	addr := &workloadapi.Address{
		Type: &workloadapi.Address_Workload{Workload: &workloadapi.Workload{
			Uid:            "Kubernetes//Pod/ns1/app-1",
			Name:           "app-1",
			Namespace:      "ns1",
			Addresses:      [][]byte{ip.AsSlice()},
			TunnelProtocol: workloadapi.TunnelProtocol_HBONE,
			Services: map[string]*workloadapi.PortList{
				"ns1/app.ns1.svc.cluster.local": {
					Ports: []*workloadapi.Port{{ServicePort: 80, TargetPort: 8080}},
				},
			},
		}},
	}

	b, err := proto.Marshal(addr)
	if err != nil {
		fmt.Println("marshal:", err)
		return
	}
	var got workloadapi.Address
	if err := proto.Unmarshal(b, &got); err != nil {
		fmt.Println("unmarshal:", err)
		return
	}

	w := got.GetWorkload()
	a, _ := netip.AddrFromSlice(w.GetAddresses()[0])
	port := w.GetServices()["ns1/app.ns1.svc.cluster.local"].GetPorts()[0]
	fmt.Println("uid:", w.GetUid())
	fmt.Println("address:", a)
	fmt.Println("tunnel:", w.GetTunnelProtocol())
	fmt.Printf("ns1/app.ns1.svc.cluster.local: %d -> %d\n", port.GetServicePort(), port.GetTargetPort())
	fmt.Println("is a service:", got.GetService() != nil)
	// Output:
	// uid: Kubernetes//Pod/ns1/app-1
	// address: 10.0.0.7
	// tunnel: HBONE
	// ns1/app.ns1.svc.cluster.local: 80 -> 8080
	// is a service: false
}
