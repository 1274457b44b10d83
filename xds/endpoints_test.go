package xds_test

import (
	"net/netip"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/xds"
)

const host = model.Hostname("echo.default.svc.cluster.local")

// pvEP returns a proxyview endpoint of weight 1, healthy unless mutated.
func pvEP(addr string, port uint32, mutate ...func(*proxyview.Endpoint)) proxyview.Endpoint {
	e := proxyview.Endpoint{Address: netip.MustParseAddr(addr), Port: port, Weight: 1, Health: model.Healthy}
	for _, m := range mutate {
		m(&e)
	}
	return e
}

func group(l string, weight uint32, eps ...proxyview.Endpoint) proxyview.LocalityEndpoints {
	return proxyview.LocalityEndpoints{Locality: model.ParseLocality(l), Weight: weight, Endpoints: eps}
}

func lbEP(addr string, port uint32, health corev3.HealthStatus, weight uint32, extra ...string) *endpointv3.LbEndpoint {
	sa := func(a string) *corev3.Address {
		return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address: a, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
		}}}
	}
	e := &endpointv3.Endpoint{Address: sa(addr)}
	for _, x := range extra {
		e.AdditionalAddresses = append(e.AdditionalAddresses, &endpointv3.Endpoint_AdditionalAddress{Address: sa(x)})
	}
	return &endpointv3.LbEndpoint{
		HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: e}, HealthStatus: health,
		LoadBalancingWeight: wrapperspb.UInt32(weight),
	}
}

func locality(region, zone, subzone string, weight uint32, eps ...*endpointv3.LbEndpoint) *endpointv3.LocalityLbEndpoints {
	return &endpointv3.LocalityLbEndpoints{
		Locality:            &corev3.Locality{Region: region, Zone: zone, SubZone: subzone},
		LoadBalancingWeight: wrapperspb.UInt32(weight),
		LbEndpoints:         eps,
	}
}

func TestLoadAssignment(t *testing.T) {
	const name = "outbound|8080||echo.default.svc.cluster.local"
	healthy, unhealthy, draining := corev3.HealthStatus_HEALTHY, corev3.HealthStatus_UNHEALTHY, corev3.HealthStatus_DRAINING
	weight := func(w uint32) func(*proxyview.Endpoint) { return func(e *proxyview.Endpoint) { e.Weight = w } }
	health := func(h model.HealthStatus) func(*proxyview.Endpoint) {
		return func(e *proxyview.Endpoint) { e.Health = h }
	}

	tests := []struct {
		name   string
		groups []proxyview.LocalityEndpoints
		want   []*endpointv3.LocalityLbEndpoints
	}{
		{name: "no endpoints", groups: nil, want: nil},
		{
			name:   "locality weight is the group's, endpoint weight the endpoint's",
			groups: []proxyview.LocalityEndpoints{group("", 2, pvEP("10.0.0.1", 9000), pvEP("10.0.0.2", 9000))},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 2,
				lbEP("10.0.0.1", 9000, healthy, 1), lbEP("10.0.0.2", 9000, healthy, 1))},
		},
		{
			name: "localities in the order given",
			groups: []proxyview.LocalityEndpoints{
				group("us-east1/us-east1-b/rack1", 4, pvEP("10.0.0.1", 9000, weight(3)), pvEP("10.0.0.2", 9000)),
				group("us-west1/us-west1-a", 5, pvEP("10.0.0.3", 9000, weight(5))),
			},
			want: []*endpointv3.LocalityLbEndpoints{
				locality("us-east1", "us-east1-b", "rack1", 4, lbEP("10.0.0.1", 9000, healthy, 3), lbEP("10.0.0.2", 9000, healthy, 1)),
				locality("us-west1", "us-west1-a", "", 5, lbEP("10.0.0.3", 9000, healthy, 5)),
			},
		},
		{
			name: "health mapped; a health no assignment carries is dropped, and its weight",
			groups: []proxyview.LocalityEndpoints{group("", 4,
				pvEP("10.0.0.1", 9000, health(model.Unhealthy)),
				pvEP("10.0.0.2", 9000, health(model.Draining)),
				pvEP("10.0.0.3", 9000, health(model.Healthy)),
				pvEP("10.0.0.4", 9000, health(model.Terminating)))},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 3,
				lbEP("10.0.0.1", 9000, unhealthy, 1), lbEP("10.0.0.2", 9000, draining, 1), lbEP("10.0.0.3", 9000, healthy, 1))},
		},
		{
			name: "duplicate addresses: the first kept, across localities; an emptied locality dropped",
			groups: []proxyview.LocalityEndpoints{
				group("r1/z1", 3, pvEP("10.0.0.1", 9000), pvEP("10.0.0.1", 9000, weight(2))),
				group("r2/z2", 1, pvEP("10.0.0.1", 9000)),
				group("r3/z3", 1, pvEP("10.0.0.1", 9001)),
			},
			want: []*endpointv3.LocalityLbEndpoints{
				locality("r1", "z1", "", 1, lbEP("10.0.0.1", 9000, healthy, 1)),
				locality("r3", "z3", "", 1, lbEP("10.0.0.1", 9001, healthy, 1)),
			},
		},
		{
			name: "dual stack: additional addresses, IPv4-mapped addresses unmapped",
			groups: []proxyview.LocalityEndpoints{group("", 1, pvEP("::ffff:10.0.0.1", 9000, func(e *proxyview.Endpoint) {
				e.AdditionalAddresses = []netip.Addr{netip.MustParseAddr("fd00::1")}
			}))},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 1,
				lbEP("10.0.0.1", 9000, healthy, 1, "fd00::1"))},
		},
		{
			name: "a gateway is an endpoint like any other",
			groups: []proxyview.LocalityEndpoints{group("r2/z2", 2, pvEP("192.0.2.1", 15443, weight(2), func(e *proxyview.Endpoint) {
				e.Gateway = &model.NetworkGateway{Network: "net-b", Address: "192.0.2.1", Port: 15443}
			}))},
			want: []*endpointv3.LocalityLbEndpoints{locality("r2", "z2", "", 2, lbEP("192.0.2.1", 15443, healthy, 2))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := xds.LoadAssignment(host, 8080, tt.groups, xds.GRPC)
			want := &endpointv3.ClusterLoadAssignment{ClusterName: name, Endpoints: tt.want}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("LoadAssignment (-want +got):\n%s", diff)
			}
			if err := got.ValidateAll(); err != nil {
				t.Errorf("LoadAssignment is not valid: %v", err)
			}
		})
	}
}

func TestHealthStatus(t *testing.T) {
	tests := []struct {
		in   model.HealthStatus
		want corev3.HealthStatus
		ok   bool
	}{
		{model.Healthy, corev3.HealthStatus_HEALTHY, true},
		{model.Unhealthy, corev3.HealthStatus_UNHEALTHY, true},
		{model.Draining, corev3.HealthStatus_DRAINING, true},
		{model.Terminating, corev3.HealthStatus_UNKNOWN, false},
		{model.HealthStatus(42), corev3.HealthStatus_UNKNOWN, false},
	}
	for _, tt := range tests {
		got, ok := xds.HealthStatus(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("HealthStatus(%s) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLoadAssignmentPriorities: the view's failover priorities reach the
// assignment, renumbered without gaps when a priority's endpoints are all
// left out.
func TestLoadAssignmentPriorities(t *testing.T) {
	at := func(ip string) proxyview.Endpoint {
		return proxyview.Endpoint{Address: netip.MustParseAddr(ip), Port: 8080, Weight: 1, Health: model.Healthy}
	}
	groups := []proxyview.LocalityEndpoints{
		{Locality: model.ParseLocality("r1/z1"), Priority: 0, Weight: 1, Endpoints: []proxyview.Endpoint{at("10.0.0.1")}},
		// the same address again: left out, and with it priority 1
		{Locality: model.ParseLocality("r1/z2"), Priority: 1, Weight: 1, Endpoints: []proxyview.Endpoint{at("10.0.0.1")}},
		{Locality: model.ParseLocality("r2/z1"), Priority: 2, Weight: 1, Endpoints: []proxyview.Endpoint{at("10.0.0.3")}},
	}
	cla := xds.LoadAssignment("echo.default.svc.cluster.local", 80, groups, xds.GRPC)
	var got []uint32
	for _, l := range cla.Endpoints {
		got = append(got, l.Priority)
	}
	if len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("priorities = %v, want [0 1]", got)
	}
}

// TestLoadAssignmentClients: a unix domain socket endpoint is a pipe for
// Envoy and left out for gRPC; a subzone deeper than one level reaches
// the client as its first level, its groups kept apart.
func TestLoadAssignmentClients(t *testing.T) {
	pipe := proxyview.Endpoint{Path: "/var/run/agent.sock", Weight: 1, Health: model.Healthy}
	groups := []proxyview.LocalityEndpoints{
		{Locality: model.ParseLocality("us/us-east-1/az-1/r11"), Weight: 3, Endpoints: []proxyview.Endpoint{pvEP("10.0.0.1", 8080), pipe, pipe}},
		{Locality: model.ParseLocality("us/us-east-1/az-1/r12"), Weight: 1, Endpoints: []proxyview.Endpoint{pvEP("10.0.0.2", 8080)}},
	}
	pipeEP := &endpointv3.LbEndpoint{
		HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: "/var/run/agent.sock"}}},
		}},
		HealthStatus:        corev3.HealthStatus_HEALTHY,
		LoadBalancingWeight: wrapperspb.UInt32(1),
	}
	for _, tt := range []struct {
		client xds.Client
		want   []*endpointv3.LocalityLbEndpoints
	}{
		{xds.Envoy, []*endpointv3.LocalityLbEndpoints{
			locality("us", "us-east-1", "az-1", 2, lbEP("10.0.0.1", 8080, corev3.HealthStatus_HEALTHY, 1), pipeEP),
			locality("us", "us-east-1", "az-1", 1, lbEP("10.0.0.2", 8080, corev3.HealthStatus_HEALTHY, 1)),
		}},
		{xds.GRPC, []*endpointv3.LocalityLbEndpoints{
			locality("us", "us-east-1", "az-1", 1, lbEP("10.0.0.1", 8080, corev3.HealthStatus_HEALTHY, 1)),
			locality("us", "us-east-1", "az-1", 1, lbEP("10.0.0.2", 8080, corev3.HealthStatus_HEALTHY, 1)),
		}},
	} {
		got := xds.LoadAssignment(host, 8080, groups, tt.client)
		if diff := cmp.Diff(tt.want, got.GetEndpoints(), protocmp.Transform()); diff != "" {
			t.Errorf("client %d: endpoints (-want +got):\n%s", tt.client, diff)
		}
	}
}
