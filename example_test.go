package meshreg_test

import (
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// Code that consumes a registry takes a registry.Registry (or just its
// Discovery side), so it runs against the real registries and, in tests,
// against the in-memory one.
func Example() {
	reg, err := memory.New(memory.Options{ClusterID: "cluster-a"})
	if err != nil {
		panic(err)
	}
	reviews := memory.Service("reviews", "default").Port("http", 9080).Build()
	reg.AddService(reviews)
	reg.SetEndpoints(reviews.Key(), memory.Endpoint("10.1.0.1", 9080).Port("http").Build())

	printTargets(reg, netip.MustParseAddr("10.1.0.1"))
	// Output:
	// 10.1.0.1 serves reviews.default.svc.cluster.local:9080 (HTTP) on 9080
}

func printTargets(d registry.Discovery, ip netip.Addr) {
	for _, t := range d.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip}}) {
		fmt.Printf("%s serves %s:%d (%s) on %d\n", ip, t.Service.Hostname, t.Port.Port, t.Port.Protocol, t.TargetPort)
	}
}
