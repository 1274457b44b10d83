package model

import (
	"maps"
	"net/netip"
	"slices"
)

// MeshNetworks is Istio's meshNetworks setting: the networks of the mesh,
// which endpoints are on each, and the gateways that lead into each.
type MeshNetworks struct {
	Networks map[NetworkID]MeshNetwork
}

// MeshNetwork is one network of MeshNetworks.
type MeshNetwork struct {
	// Endpoints say which endpoints are on the network: those of a
	// registry (a cluster), or those whose address is in a range.
	Endpoints []MeshNetworkEndpoints
	// Gateways lead into the network.
	Gateways []MeshNetworkGateway
}

// MeshNetworkEndpoints is one of a network's endpoint sources: one of
// FromRegistry and FromCIDR is set (an item with neither is ignored, as in
// Istio).
type MeshNetworkEndpoints struct {
	// FromRegistry is a cluster ID: the endpoints of the Kubernetes
	// registry of that cluster are on the network.
	FromRegistry ClusterID
	// FromCIDR is a range: endpoints with an address in it are on the
	// network.
	FromCIDR netip.Prefix
}

// MeshNetworkGateway is a gateway of a network: one of Address and
// RegistryServiceName is set (a gateway with neither is ignored, as in
// Istio).
type MeshNetworkGateway struct {
	// Address is an IP literal or a host name.
	Address string
	// RegistryServiceName is the host name of a Service whose
	// addresses are the gateway's, in each cluster the network takes
	// endpoints FromRegistry.
	RegistryServiceName Hostname
	// Port is the gateway's mTLS port.
	Port uint32
}

// AddressGateways returns the gateways given by address, with no
// cluster, sorted.
func (m *MeshNetworks) AddressGateways() []NetworkGateway {
	if m == nil {
		return nil
	}
	var out []NetworkGateway
	for name, nw := range m.Networks {
		for _, gw := range nw.Gateways {
			if gw.Address != "" {
				out = append(out, NetworkGateway{Network: name, Address: gw.Address, Port: gw.Port, Source: GatewayFromMeshNetworks})
			}
		}
	}
	return SortGateways(out)
}

// RegistryNetwork returns the network whose endpoints come FromRegistry
// the cluster; of several, the first by name. "" when none.
func (m *MeshNetworks) RegistryNetwork(cluster ClusterID) NetworkID {
	if m == nil {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(m.Networks)) {
		for _, ep := range m.Networks[name].Endpoints {
			if ep.FromRegistry == cluster {
				return name
			}
		}
	}
	return ""
}

// CIDRs returns the ranges of every network's FromCIDR endpoints. When
// two networks name one range, the first by name keeps it.
func (m *MeshNetworks) CIDRs() map[netip.Prefix]NetworkID {
	if m == nil {
		return nil
	}
	out := map[netip.Prefix]NetworkID{}
	for _, name := range slices.Sorted(maps.Keys(m.Networks)) {
		for _, ep := range m.Networks[name].Endpoints {
			if p := ep.FromCIDR.Masked(); ep.FromCIDR.IsValid() {
				if _, ok := out[p]; !ok {
					out[p] = name
				}
			}
		}
	}
	return out
}

// ServiceGateways returns, by host name, the gateways that the Services
// of a cluster stand for: those given by RegistryServiceName in the
// networks whose endpoints come FromRegistry the cluster, each with its
// network, the cluster and its port; their addresses are the Service's.
func (m *MeshNetworks) ServiceGateways(cluster ClusterID) map[Hostname][]NetworkGateway {
	if m == nil {
		return nil
	}
	var out map[Hostname][]NetworkGateway
	for _, name := range slices.Sorted(maps.Keys(m.Networks)) {
		nw := m.Networks[name]
		if !slices.ContainsFunc(nw.Endpoints, func(ep MeshNetworkEndpoints) bool { return ep.FromRegistry == cluster }) {
			continue
		}
		for _, gw := range nw.Gateways {
			if gw.RegistryServiceName == "" {
				continue
			}
			if out == nil {
				out = map[Hostname][]NetworkGateway{}
			}
			out[gw.RegistryServiceName] = append(out[gw.RegistryServiceName], NetworkGateway{
				Network: name, Cluster: cluster, Port: gw.Port, Source: GatewayFromMeshNetworks,
			})
		}
	}
	return out
}
