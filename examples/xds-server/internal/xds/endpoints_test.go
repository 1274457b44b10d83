package xds_test

import (
	"net/netip"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/examples/xds-server/internal/xds"
	"github.com/meshreg/meshreg/model"
)

const host = model.Hostname("echo.default.svc.cluster.local")

var grpcPort = model.Port{Name: "grpc", Port: 8080, Protocol: model.GRPC}

func ep(addr string, port uint32, mutate ...func(*model.Endpoint)) *model.Endpoint {
	e := &model.Endpoint{Port: port, ServicePortName: "grpc"}
	if addr != "" {
		e.Addresses = []netip.Addr{netip.MustParseAddr(addr)}
	}
	for _, m := range mutate {
		m(e)
	}
	return e
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
	lb := &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: e}, HealthStatus: health}
	if weight > 0 {
		lb.LoadBalancingWeight = wrapperspb.UInt32(weight)
	}
	return lb
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
	east := func(e *model.Endpoint) {
		e.Locality = model.Locality{Region: "us-east1", Zone: "us-east1-b", Subzone: "rack1"}
	}
	west := func(e *model.Endpoint) { e.Locality = model.Locality{Region: "us-west1", Zone: "us-west1-a"} }
	weight := func(w uint32) func(*model.Endpoint) { return func(e *model.Endpoint) { e.Weight = w } }
	health := func(h model.HealthStatus) func(*model.Endpoint) { return func(e *model.Endpoint) { e.Health = h } }

	tests := []struct {
		name string
		eps  []*model.Endpoint
		want []*endpointv3.LocalityLbEndpoints
	}{
		{name: "no endpoints", eps: nil, want: nil},
		{
			name: "unset weights count as one, empty locality kept",
			eps:  []*model.Endpoint{ep("10.0.0.1", 9000), ep("10.0.0.2", 9000)},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 2,
				lbEP("10.0.0.1", 9000, healthy, 0), lbEP("10.0.0.2", 9000, healthy, 0))},
		},
		{
			name: "localities sorted, weights summed per locality",
			eps: []*model.Endpoint{
				ep("10.0.0.3", 9000, west, weight(5)),
				ep("10.0.0.1", 9000, east, weight(3)),
				ep("10.0.0.2", 9000, east),
			},
			want: []*endpointv3.LocalityLbEndpoints{
				locality("us-east1", "us-east1-b", "rack1", 4,
					lbEP("10.0.0.1", 9000, healthy, 3), lbEP("10.0.0.2", 9000, healthy, 0)),
				locality("us-west1", "us-west1-a", "", 5, lbEP("10.0.0.3", 9000, healthy, 5)),
			},
		},
		{
			name: "health mapped, terminating dropped",
			eps: []*model.Endpoint{
				ep("10.0.0.1", 9000, health(model.Unhealthy)),
				ep("10.0.0.2", 9000, health(model.Draining)),
				ep("10.0.0.3", 9000, health(model.Terminating)),
			},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 2,
				lbEP("10.0.0.1", 9000, unhealthy, 0), lbEP("10.0.0.2", 9000, draining, 0))},
		},
		{
			name: "other ports, hostname endpoints and duplicate addresses left out",
			eps: []*model.Endpoint{
				ep("10.0.0.1", 9000),
				ep("10.0.0.1", 9000, func(e *model.Endpoint) { e.Cluster = "other" }),
				ep("10.0.0.2", 9001, func(e *model.Endpoint) { e.ServicePortName = "http" }),
				ep("", 9000, func(e *model.Endpoint) { e.Hostname = "db.example.com" }),
			},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 1, lbEP("10.0.0.1", 9000, healthy, 0))},
		},
		{
			name: "dual stack: further addresses are additional addresses",
			eps: []*model.Endpoint{ep("10.0.0.1", 9000, func(e *model.Endpoint) {
				e.Addresses = append(e.Addresses, netip.MustParseAddr("fd00::1"))
			})},
			want: []*endpointv3.LocalityLbEndpoints{locality("", "", "", 1,
				lbEP("10.0.0.1", 9000, healthy, 0, "fd00::1"))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := xds.LoadAssignment(host, grpcPort, tt.eps)
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
