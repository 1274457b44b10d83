package xds

import (
	"cmp"
	"net/netip"
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/model"
)

// HealthStatus maps an endpoint's health to Envoy's, and reports false for
// the endpoints left out of load assignments (Terminating; see the package
// doc).
func HealthStatus(h model.HealthStatus) (corev3.HealthStatus, bool) {
	switch h {
	case model.Healthy:
		return corev3.HealthStatus_HEALTHY, true
	case model.Unhealthy:
		return corev3.HealthStatus_UNHEALTHY, true
	case model.Draining:
		return corev3.HealthStatus_DRAINING, true
	}
	return corev3.HealthStatus_UNKNOWN, false
}

// LoadAssignment returns the ClusterLoadAssignment of one port of a
// service: the endpoints of eps that serve the port (by service port
// name), grouped by locality. eps may hold every port's endpoints; the
// others are ignored. See the package doc for weights, health, and the
// endpoints left out.
func LoadAssignment(host model.Hostname, p model.Port, eps []*model.Endpoint) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: ClusterName(host, p.Port)}
	byLocality := map[model.Locality]*endpointv3.LocalityLbEndpoints{}
	seen := map[netip.AddrPort]bool{}
	for _, ep := range eps {
		if ep.ServicePortName != p.Name || len(ep.Addresses) == 0 || !fresh(seen, ep) {
			continue
		}
		health, ok := HealthStatus(ep.Health)
		if !ok {
			continue
		}
		lb := &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(ep.Addresses[0], ep.Port),
			}},
			HealthStatus: health,
		}
		for _, a := range ep.Addresses[1:] {
			lb.GetEndpoint().AdditionalAddresses = append(lb.GetEndpoint().AdditionalAddresses,
				&endpointv3.Endpoint_AdditionalAddress{Address: socketAddress(a, ep.Port)})
		}
		if ep.Weight > 0 {
			lb.LoadBalancingWeight = wrapperspb.UInt32(ep.Weight)
		}
		loc := byLocality[ep.Locality]
		if loc == nil {
			loc = &endpointv3.LocalityLbEndpoints{
				Locality: &corev3.Locality{
					Region: ep.Locality.Region, Zone: ep.Locality.Zone, SubZone: ep.Locality.Subzone,
				},
				LoadBalancingWeight: wrapperspb.UInt32(0),
			}
			byLocality[ep.Locality] = loc
			cla.Endpoints = append(cla.Endpoints, loc)
		}
		loc.LbEndpoints = append(loc.LbEndpoints, lb)
		loc.LoadBalancingWeight.Value = addWeight(loc.LoadBalancingWeight.Value, max(ep.Weight, 1))
	}
	slices.SortFunc(cla.Endpoints, func(a, b *endpointv3.LocalityLbEndpoints) int {
		return cmp.Or(
			cmp.Compare(a.Locality.Region, b.Locality.Region),
			cmp.Compare(a.Locality.Zone, b.Locality.Zone),
			cmp.Compare(a.Locality.SubZone, b.Locality.SubZone),
		)
	})
	return cla
}

// fresh reports whether none of ep's addresses (at its port) was seen
// before, and records them.
func fresh(seen map[netip.AddrPort]bool, ep *model.Endpoint) bool {
	for _, a := range ep.Addresses {
		if seen[netip.AddrPortFrom(a, uint16(ep.Port))] {
			return false
		}
	}
	for _, a := range ep.Addresses {
		seen[netip.AddrPortFrom(a, uint16(ep.Port))] = true
	}
	return true
}

// addWeight adds without overflowing: gRPC rejects locality weights whose
// sum exceeds 2^32-1, so a locality's weight saturates.
func addWeight(a, b uint32) uint32 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint32(0)
}

func socketAddress(a netip.Addr, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Protocol:      corev3.SocketAddress_TCP,
		Address:       a.Unmap().WithZone("").String(),
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}
