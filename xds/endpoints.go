package xds

import (
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
)

// HealthStatus maps an endpoint's health to Envoy's, and reports false for
// a health a load assignment never carries (Terminating: proxyview leaves
// such endpoints out).
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
// service for one proxy, a client of kind c, from that proxy's endpoints
// of the port as proxyview.Snapshot.Endpoints gives them (filtered,
// grouped and sorted by locality, gateways standing in for unreachable
// networks). See the package doc for weights, health and the endpoints
// left out.
func LoadAssignment(host model.Hostname, port uint32, groups []proxyview.LocalityEndpoints, c Client) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: ClusterName(host, port)}
	seen := map[netip.AddrPort]bool{}
	seenPaths := map[string]bool{}
	for _, g := range groups {
		loc := &endpointv3.LocalityLbEndpoints{
			Locality: envoyLocality(g.Locality),
			Priority: g.Priority,
		}
		dropped := false
		var kept uint32 // the weight of the endpoints kept, should some be dropped
		for _, ep := range g.Endpoints {
			health, ok := HealthStatus(ep.Health)
			if ep.Path != "" {
				// A unix domain socket: Envoy connects to it as a pipe;
				// a gRPC client cannot.
				ok = ok && c == Envoy && !seenPaths[ep.Path]
				seenPaths[ep.Path] = true
			} else {
				ok = ok && fresh(seen, ep)
			}
			if !ok {
				dropped = true
				continue
			}
			e := &endpointv3.Endpoint{Address: socketAddress(ep.Address, ep.Port)}
			if ep.Path != "" {
				e.Address = &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: ep.Path}}}
			}
			for _, a := range ep.AdditionalAddresses {
				e.AdditionalAddresses = append(e.AdditionalAddresses,
					&endpointv3.Endpoint_AdditionalAddress{Address: socketAddress(a, ep.Port)})
			}
			loc.LbEndpoints = append(loc.LbEndpoints, &endpointv3.LbEndpoint{
				HostIdentifier:      &endpointv3.LbEndpoint_Endpoint{Endpoint: e},
				HealthStatus:        health,
				LoadBalancingWeight: wrapperspb.UInt32(ep.Weight),
			})
			kept = addWeight(kept, ep.Weight)
		}
		if len(loc.LbEndpoints) == 0 {
			continue
		}
		weight := g.Weight
		if dropped {
			weight = kept
		}
		loc.LoadBalancingWeight = wrapperspb.UInt32(weight)
		cla.Endpoints = append(cla.Endpoints, loc)
	}
	compactPriorities(cla.Endpoints)
	return cla
}

// envoyLocality is a locality as Envoy takes it: region, zone and
// subzone, a subzone of more than one level ("az-1/rack-7") cut to its
// first, as Istio sends it. Two localities that differ past that level
// stay two groups of endpoints, as Istio groups them.
func envoyLocality(l model.Locality) *corev3.Locality {
	sub, _, _ := strings.Cut(l.Subzone, "/")
	return &corev3.Locality{Region: l.Region, Zone: l.Zone, SubZone: sub}
}

// compactPriorities numbers the priorities in use 0, 1, 2... in their
// order: clients reject an assignment whose priorities skip one, which a
// priority whose endpoints were all dropped above would leave.
func compactPriorities(locs []*endpointv3.LocalityLbEndpoints) {
	used := map[uint32]bool{}
	for _, l := range locs {
		used[l.Priority] = true
	}
	rank := map[uint32]uint32{}
	for i, p := range slices.Sorted(maps.Keys(used)) {
		rank[p] = uint32(i)
	}
	for _, l := range locs {
		l.Priority = rank[l.Priority]
	}
}

// fresh reports whether none of ep's addresses (at its port) was seen
// before, and records them: gRPC rejects a whole assignment in which two
// endpoints share an address (overlapping pod IPs in two clusters, or
// one gateway standing for two localities), so only the first is kept.
func fresh(seen map[netip.AddrPort]bool, ep proxyview.Endpoint) bool {
	addrs := append([]netip.Addr{ep.Address}, ep.AdditionalAddresses...)
	for _, a := range addrs {
		if seen[netip.AddrPortFrom(a.Unmap(), uint16(ep.Port))] {
			return false
		}
	}
	for _, a := range addrs {
		seen[netip.AddrPortFrom(a.Unmap(), uint16(ep.Port))] = true
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
