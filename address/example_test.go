package address_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

// A Service selecting two pods, one of them not Ready: the index holds
// the service and both workloads, and finds them by address.
func Example() {
	reg, err := memory.New(memory.Options{ClusterID: "east"})
	if err != nil {
		panic(err)
	}
	reg.AddService(memory.Service("web", "shop").PortWith(model.Port{Name: "http", Port: 80, Protocol: model.HTTP, TargetPortName: "http"}).
		VIP("10.96.0.7").Selector(map[string]string{"app": "web"}).Build())
	for i, ready := range []bool{true, false} {
		w := memory.Workload(fmt.Sprintf("web-%d", i), "shop").Address(fmt.Sprintf("10.1.0.%d", i+1)).
			Labels(map[string]string{"app": "web"}).NamedPort("http", 8080).Build()
		if !ready {
			w.Endpoint.Health = model.Unhealthy
		}
		reg.AddWorkload(w)
	}

	idx, err := address.New(reg, address.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reg.Run(ctx)
	go idx.Run(ctx)
	for !idx.HasSynced() {
		time.Sleep(time.Millisecond)
	}

	snap := idx.Snapshot()
	for _, w := range snap.Workloads() {
		for _, p := range w.Services["shop/web.shop.svc.cluster.local"].GetPorts() {
			fmt.Println(w.Uid, w.Status, p.ServicePort, "->", p.TargetPort)
		}
	}
	for _, r := range snap.Lookup(address.IPKey("", netip.MustParseAddr("10.96.0.7"))) {
		for _, p := range r.Address.GetService().GetPorts() {
			fmt.Println(r.Key, p.ServicePort, p.AppProtocol)
		}
	}
	// Output:
	// east//Pod/shop/web-0 HEALTHY 80 -> 8080
	// east//Pod/shop/web-1 UNHEALTHY 80 -> 8080
	// shop/web.shop.svc.cluster.local 80 HTTP11
}
