package index_test

import (
	"fmt"
	"net/netip"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A store keeps its services and their endpoints in indexes; an endpoint
// indexed by address reaches its service through the service's Owner.
func Example() {
	var (
		services index.Services
		byIP     index.EndpointsByIP
	)
	svc := &model.Service{
		Hostname: "reviews.default.svc.cluster.local", Namespace: "default", Name: "reviews",
		Provider: model.Kubernetes,
		Ports:    []model.Port{{Name: "http", Port: 9080, Protocol: model.HTTP}},
	}
	services.Put(svc)
	owner := &index.Owner{Key: svc.Key(), Service: svc}

	eps := []*model.Endpoint{endpoint("10.1.0.2", 8080), endpoint("10.1.0.1", 8080)}
	index.SortEndpoints(nil, eps)
	byIP.Add(owner, eps)

	fmt.Println(services.Winner("reviews.default.svc.cluster.local").Name)
	for _, t := range byIP.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}) {
		fmt.Println(t.Service.Hostname, t.Port.Port, t.TargetPort)
	}
	// Output:
	// reviews
	// reviews.default.svc.cluster.local 9080 8080
}
