package model

import (
	"cmp"
	"fmt"
	"slices"
)

// Default ports of an Istio east-west gateway.
const (
	// DefaultGatewayPort is the mTLS (AUTO_PASSTHROUGH) port of a network
	// gateway whose Service names no other
	// (networking.istio.io/gatewayPort).
	DefaultGatewayPort = 15443
	// DefaultHBONEPort is the port a gateway serves HBONE on.
	DefaultHBONEPort = 15008
)

// NetworkGateway is a cross-network (east-west) gateway: an address at
// which proxies on other networks reach the workloads of Network.
//
// It is a comparable value with no references: == compares every field,
// and a copy shares nothing.
type NetworkGateway struct {
	// Network is the network the gateway leads into.
	Network NetworkID
	// Cluster is the cluster of the registry that found the gateway; ""
	// for a gateway given by address in the mesh networks.
	Cluster ClusterID
	// Address is an IP literal or a host name (a LoadBalancer's, or one
	// given in the mesh networks), as given: never resolved.
	Address string
	// Port is the mTLS (AUTO_PASSTHROUGH) port, or for a NodePort
	// gateway that port's node port; 0 when the gateway serves only
	// HBONE.
	Port uint32
	// HBONEPort is the port the gateway serves HBONE on, 0 when it does
	// not.
	HBONEPort uint32
	// ServiceAccount is "namespace/name" of the gateway's service account
	// when it is known, else "".
	ServiceAccount string
	// Source says what declared the gateway.
	Source GatewaySource
}

// Compare orders gateways by network, cluster, address, port, HBONE
// port, service account and source: the order in which registries list
// them and the dump writes them. It returns -1, 0 or +1 as g sorts
// before, with or after o.
func (g NetworkGateway) Compare(o NetworkGateway) int {
	return cmp.Or(
		cmp.Compare(g.Network, o.Network),
		cmp.Compare(g.Cluster, o.Cluster),
		cmp.Compare(g.Address, o.Address),
		cmp.Compare(g.Port, o.Port),
		cmp.Compare(g.HBONEPort, o.HBONEPort),
		cmp.Compare(g.ServiceAccount, o.ServiceAccount),
		cmp.Compare(g.Source, o.Source),
	)
}

// String returns "network/cluster/address:port", with "+hbone:N" when
// the gateway serves HBONE.
func (g NetworkGateway) String() string {
	s := fmt.Sprintf("%s/%s/%s:%d", g.Network, g.Cluster, g.Address, g.Port)
	if g.HBONEPort != 0 {
		s += fmt.Sprintf("+hbone:%d", g.HBONEPort)
	}
	return s
}

// SortGateways sorts gateways by Compare and removes duplicates, in
// place, and returns the shortened slice.
func SortGateways(gws []NetworkGateway) []NetworkGateway {
	slices.SortFunc(gws, NetworkGateway.Compare)
	return slices.Compact(gws)
}

// GatewaySource says what declared a network gateway.
type GatewaySource uint8

// Gateway sources.
const (
	// GatewaySourceUnknown: not recorded.
	GatewaySourceUnknown GatewaySource = iota
	// GatewayFromService: a Kubernetes Service labelled
	// topology.istio.io/network.
	GatewayFromService
	// GatewayFromMeshNetworks: the mesh networks, by address or by a
	// registry service name.
	GatewayFromMeshNetworks
	// GatewayFromGateway: a Gateway API Gateway labelled
	// topology.istio.io/network.
	GatewayFromGateway
)

// String returns the dump word: "Service", "MeshNetworks", "Gateway", or
// "" when unknown.
func (s GatewaySource) String() string {
	switch s {
	case GatewaySourceUnknown:
		return ""
	case GatewayFromService:
		return "Service"
	case GatewayFromMeshNetworks:
		return "MeshNetworks"
	case GatewayFromGateway:
		return "Gateway"
	}
	return fmt.Sprintf("GatewaySource(%d)", uint8(s))
}
