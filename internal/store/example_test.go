package store_test

import (
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A registry writes model values to its store; the store publishes what
// changed. Endpoints written before their service wait for it.
func Example() {
	s := store.New()
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: "c1"}
	svc := &model.Service{
		Hostname: "reviews.default.svc.cluster.local", Namespace: "default", Name: "reviews",
		Provider: model.Kubernetes,
		Ports:    []model.Port{{Name: "http", Port: 9080, Protocol: model.HTTP}},
	}

	done := make(chan struct{})
	unsubscribe := s.Subscribe(registry.HandlerFuncs{
		ServiceFunc: func(e registry.ServiceEvent) { fmt.Println(e.Type, e.Service().Hostname) },
		EndpointsFunc: func(e registry.EndpointsEvent) {
			fmt.Println("endpoints", e.Shard, len(e.Endpoints))
			close(done)
		},
	})
	defer unsubscribe()

	s.SetEndpoints(shard, svc.Key(), []*model.Endpoint{{
		Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.1")}, Port: 9080, ServicePortName: "http", Cluster: "c1",
	}})
	s.UpsertService(svc)
	<-done

	for _, t := range s.ProxyTargets(registry.ProxyQuery{Namespace: "default", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}) {
		fmt.Println(t.Service.Hostname, t.Port.Port, t.TargetPort)
	}
	// Output:
	// add reviews.default.svc.cluster.local
	// endpoints Kubernetes/c1 1
	// reviews.default.svc.cluster.local 9080 9080
}
