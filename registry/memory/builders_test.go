package memory_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

func TestServiceBuilder(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	got := memory.Service("reviews", "default").
		Port("http", 9080).
		Port("grpc-api", 9090).
		PortWith(model.Port{Name: "metrics", Port: 15020, Protocol: model.HTTP, TargetPort: 15090}).
		VIP("10.96.0.10", "fd00::a").
		Cluster("cluster-b").VIP("10.0.0.0/16").
		ExportTo("prod", ".").
		Labels(map[string]string{"app": "reviews"}).
		Selector(map[string]string{"app": "reviews"}).
		ServiceAccounts("spiffe://cluster.local/ns/default/sa/z", "spiffe://cluster.local/ns/default/sa/a").
		CreatedAt(created).
		Build()
	want := &model.Service{
		Hostname: "reviews.default.svc.cluster.local", Namespace: "default", Name: "reviews",
		Provider: model.Kubernetes,
		Ports: []model.Port{
			{Name: "http", Port: 9080, Protocol: model.HTTP},
			{Name: "grpc-api", Port: 9090, Protocol: model.GRPC},
			{Name: "metrics", Port: 15020, Protocol: model.HTTP, TargetPort: 15090},
		},
		Addresses: map[model.ClusterID][]netip.Prefix{
			"":          {netip.MustParsePrefix("10.96.0.10/32"), netip.MustParsePrefix("fd00::a/128")},
			"cluster-b": {netip.MustParsePrefix("10.0.0.0/16")},
		},
		ExportTo:        []string{".", "prod"},
		Labels:          map[string]string{"app": "reviews"},
		Selector:        map[string]string{"app": "reviews"},
		ServiceAccounts: []string{"spiffe://cluster.local/ns/default/sa/a", "spiffe://cluster.local/ns/default/sa/z"},
		CreationTime:    created,
	}
	if !got.Equals(want) {
		t.Errorf("built\n%+v\nwant\n%+v", got, want)
	}

	se := memory.ServiceEntry("api.example.com", "egress").Port("https", 443).MeshExternal().Build()
	if se.Provider != model.External || se.Resolution != model.DNS || !se.MeshExternal ||
		se.Hostname != "api.example.com" || se.Name != "api.example.com" || se.Ports[0].Protocol != model.HTTPS {
		t.Errorf("ServiceEntry built %+v", se)
	}
	alias := memory.Service("db", "prod").ExternalName("db.example.com").Build()
	if alias.ExternalName != "db.example.com" || alias.Resolution != model.Alias || !alias.MeshExternal {
		t.Errorf("ExternalName built %+v", alias)
	}
	if all := memory.Service("a", "b").Selector(nil).Build(); all.Selector == nil {
		t.Error("Selector(nil) left the service selecting nothing")
	}
	if none := memory.Service("a", "b").Build(); none.Selector != nil {
		t.Error("a service built without Selector selects something")
	}
}

// A builder is a template: each Build is a new value, and changing one
// does not reach the builder or other builds.
func TestBuildersAreTemplates(t *testing.T) {
	sb := memory.Service("reviews", "default").Port("http", 9080).Labels(map[string]string{"a": "1"})
	one, two := sb.Build(), sb.Build()
	one.Ports[0].Port = 1
	one.Labels["a"] = "2"
	if two.Ports[0].Port != 9080 || two.Labels["a"] != "1" || sb.Build().Ports[0].Port != 9080 {
		t.Error("builds of one service builder share memory")
	}
	labels := map[string]string{"app": "x"}
	eb := memory.Endpoint("10.1.0.1", 80).Labels(labels)
	labels["app"] = "changed"
	e1 := eb.Build()
	e1.Addresses[0] = netip.MustParseAddr("10.9.9.9")
	if e2 := eb.Build(); e2.Labels["app"] != "x" || e2.Address() != "10.1.0.1" {
		t.Errorf("builds of one endpoint builder share memory: %+v", e2)
	}
}

func TestServiceBuilderBadVIP(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !strings.Contains(err.Error(), "default/reviews") || !strings.Contains(err.Error(), `"10.0.0.300"`) {
			t.Errorf("Build with a bad VIP panicked with %v, want an error naming the service and the value", r)
		}
	}()
	memory.Service("reviews", "default").VIP("10.0.0.300").Build()
}

func TestEndpointBuilder(t *testing.T) {
	got := memory.Endpoint("10.1.0.1", 9080).AlsoAddress("fd00::1").
		Port("http").
		Labels(map[string]string{"app": "reviews"}).
		Cluster("c1").Network("net-1").Locality("us-east1/us-east1-b").
		ServiceAccount("spiffe://cluster.local/ns/default/sa/reviews").
		IstioTLS().Health(model.Draining).Weight(3).Node("node-1").
		Pod("default", "reviews-1").
		Build()
	want := &model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.1"), netip.MustParseAddr("fd00::1")},
		Port:      9080, ServicePortName: "http",
		Labels:  map[string]string{"app": "reviews"},
		Cluster: "c1", Network: "net-1", Locality: model.Locality{Region: "us-east1", Zone: "us-east1-b"},
		ServiceAccount: "spiffe://cluster.local/ns/default/sa/reviews",
		TLSMode:        model.TLSIstio, Health: model.Draining, Serving: true, Weight: 3, NodeName: "node-1",
		WorkloadKind: model.KindPod, WorkloadNamespace: "default", WorkloadName: "reviews-1",
	}
	if !got.Equals(want) {
		t.Errorf("built\n%+v\nwant\n%+v", got, want)
	}
	dns := memory.Endpoint("api.example.com", 443).WorkloadEntry("egress", "api").Build()
	if dns.Hostname != "api.example.com" || len(dns.Addresses) != 0 || dns.Workload() != "egress/api" ||
		dns.WorkloadKind != model.KindWorkloadEntry || dns.Health != model.Healthy {
		t.Errorf("hostname endpoint built %+v", dns)
	}
}

func TestWorkloadBuilder(t *testing.T) {
	got := memory.Workload("vm-1", "prod").WorkloadEntry().
		Address("10.9.0.1", "fd00::9").
		Labels(map[string]string{"app": "legacy"}).
		NamedPort("http", 8080).NamedPort("grpc", 9090).
		Cluster("c1").Network("vpc").Locality("eu/eu-1").
		ServiceAccount("spiffe://cluster.local/ns/prod/sa/legacy").IstioTLS().
		Build()
	if got.Kind != model.KindWorkloadEntry || got.Name != "vm-1" || got.Namespace != "prod" {
		t.Errorf("identity: %+v", got)
	}
	if got.Key() != (model.WorkloadKey{Cluster: "c1", Kind: model.KindWorkloadEntry, Namespace: "prod", Name: "vm-1"}) {
		t.Errorf("Key() = %v", got.Key())
	}
	if !slices.Equal(got.Endpoint.AddressStrings(), []string{"10.9.0.1", "fd00::9"}) ||
		got.PortMap["http"] != 8080 || got.PortMap["grpc"] != 9090 || got.Endpoint.Labels["app"] != "legacy" ||
		got.Endpoint.Network != "vpc" || got.Endpoint.Locality.String() != "eu/eu-1" ||
		got.Endpoint.TLSMode != model.TLSIstio || got.Endpoint.Workload() != "prod/vm-1" {
		t.Errorf("built %+v", got)
	}
	if pod := memory.Workload("reviews-1", "default").Address("10.1.0.1").Build(); pod.Kind != model.KindPod || pod.Endpoint.Cluster != "" {
		t.Errorf("default workload = %+v, want a Pod with no cluster", pod)
	}
}

// A workload's health is the builder's Health, with Serving to match;
// the default stays Healthy.
func TestWorkloadHealth(t *testing.T) {
	w := memory.Workload("web-1", "shop").Address("10.1.0.1").Health(model.Unhealthy).Build()
	if w.Endpoint.Health != model.Unhealthy || w.Endpoint.Serving {
		t.Errorf("Health(Unhealthy): health %v serving %v, want Unhealthy and not serving", w.Endpoint.Health, w.Endpoint.Serving)
	}
	w = memory.Workload("web-1", "shop").Health(model.Draining).Build()
	if w.Endpoint.Health != model.Draining || !w.Endpoint.Serving {
		t.Errorf("Health(Draining): health %v serving %v, want Draining and serving", w.Endpoint.Health, w.Endpoint.Serving)
	}
	if w := memory.Workload("web-1", "shop").Build(); w.Endpoint.Health != model.Healthy {
		t.Errorf("default health %v, want Healthy", w.Endpoint.Health)
	}
}
