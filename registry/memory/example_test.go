package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// The quick start of the README: a registry with one service and two
// endpoints, queried as a control plane would.
func Example() {
	reg, err := memory.New(memory.Options{ClusterID: "cluster-a"})
	if err != nil {
		panic(err)
	}
	reviews := memory.Service("reviews", "default").Port("http", 9080).VIP("10.96.0.10").Build()
	reg.AddService(reviews)
	reg.SetEndpoints(reviews.Key(),
		memory.Endpoint("10.1.0.1", 9080).Port("http").Pod("default", "reviews-v1").Build(),
		memory.Endpoint("10.1.0.2", 9080).Port("http").Pod("default", "reviews-v2").Build())

	svc := reg.GetService("reviews.default.svc.cluster.local")
	fmt.Println(svc.Hostname, svc.Ports[0].Protocol)
	for _, ep := range reg.Endpoints(svc.Key(), registry.EndpointQuery{Port: "http"}) {
		fmt.Println(ep.Address(), ep.Port, ep.Workload(), ep.Health)
	}
	ip := netip.MustParseAddr("10.1.0.2")
	for _, t := range reg.ProxyTargets(registry.ProxyQuery{Namespace: "default", IPs: []netip.Addr{ip}}) {
		fmt.Printf("10.1.0.2 serves %s:%d\n", t.Service.Hostname, t.Port.Port)
	}
	// Output:
	// reviews.default.svc.cluster.local HTTP
	// 10.1.0.1 9080 default/reviews-v1 Healthy
	// 10.1.0.2 9080 default/reviews-v2 Healthy
	// 10.1.0.2 serves reviews.default.svc.cluster.local:9080
}

func ExampleService() {
	svc := memory.Service("reviews", "default").
		Port("http", 9080).
		Port("grpc-api", 9090).
		VIP("10.96.0.10").
		Build()
	fmt.Println(svc.Key())
	for _, p := range svc.Ports {
		fmt.Println(p.Name, p.Port, p.Protocol)
	}
	// Output:
	// default/reviews.default.svc.cluster.local
	// http 9080 HTTP
	// grpc-api 9090 GRPC
}

func ExampleServiceEntry() {
	se := memory.ServiceEntry("api.example.com", "egress").Port("https", 443).MeshExternal().Build()
	ep := memory.Endpoint("api.example.com", 443).Port("https").Build()
	fmt.Println(se.Provider, se.Resolution, se.Ports[0].Protocol, ep.Address(), len(ep.Addresses))
	// Output:
	// External DNS HTTPS api.example.com 0
}

func ExampleEndpoint() {
	ep := memory.Endpoint("10.1.0.1", 9080).AlsoAddress("fd00::1").
		Port("http").
		Labels(map[string]string{"app": "reviews", "version": "v1"}).
		Locality("us-east1/us-east1-b").
		IstioTLS().
		Pod("default", "reviews-v1-7f9").
		Build()
	fmt.Println(ep.Key(), ep.AddressStrings(), ep.Locality, ep.TLSMode, ep.Workload())
	// Output:
	// http/10.1.0.1:9080 [10.1.0.1 fd00::1] us-east1/us-east1-b istio default/reviews-v1-7f9
}

func ExampleWorkload() {
	reg, err := memory.New(memory.Options{ClusterID: "cluster-a"})
	if err != nil {
		panic(err)
	}
	reg.AddWorkload(
		memory.Workload("reviews-v1-7f9", "default").Address("10.1.0.1").Labels(map[string]string{"app": "reviews"}).Build(),
		memory.Workload("legacy-vm", "default").WorkloadEntry().Address("10.9.0.1").NamedPort("http", 8080).Build(),
	)
	for _, w := range reg.Workloads() {
		fmt.Println(w.Key())
	}
	// Output:
	// cluster-a/Pod/default/reviews-v1-7f9
	// cluster-a/WorkloadEntry/default/legacy-vm
}

// A subscriber first receives the registry's state, then every change, in
// order, one call at a time.
func ExampleRegistry_Subscribe() {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		panic(err)
	}
	reviews := memory.Service("reviews", "default").Port("http", 9080).Build()
	reg.AddService(reviews)

	deleted := make(chan struct{})
	unsubscribe := reg.Subscribe(registry.HandlerFuncs{
		ServiceFunc: func(e registry.ServiceEvent) {
			fmt.Println(e.Type, e.Service().Name, "initial:", e.Initial)
			if e.Type == model.EventDelete {
				close(deleted)
			}
		},
		EndpointsFunc: func(e registry.EndpointsEvent) {
			fmt.Println("endpoints", e.Service.Hostname, len(e.Endpoints))
		},
	})
	defer unsubscribe()

	reg.SetEndpoints(reviews.Key(), memory.Endpoint("10.1.0.1", 9080).Port("http").Build())
	reg.DeleteService(reviews.Key())
	<-deleted
	// Output:
	// add reviews initial: true
	// endpoints reviews.default.svc.cluster.local 1
	// endpoints reviews.default.svc.cluster.local 0
	// delete reviews initial: false
}

// Run makes the state written so far the registry's initial state:
// HasSynced turns true once it has reached every handler.
func ExampleRegistry_Run() {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		panic(err)
	}
	reg.AddService(memory.Service("reviews", "default").Build())
	fmt.Println("before Run:", reg.HasSynced())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !reg.HasSynced() { // poll, as cache.WaitForCacheSync does
		<-tick.C
	}
	fmt.Println("after Run:", reg.HasSynced())
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// before Run: false
	// after Run: true
	// Run returned: <nil>
}
