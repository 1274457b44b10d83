package proxyview

import (
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// gatewayKey is a gateway as Istio's set of gateways tells them apart:
// every field but the source.
type gatewayKey struct {
	network        model.NetworkID
	cluster        model.ClusterID
	address        netip.Addr
	port           uint32
	hboneport      uint32
	serviceAccount string
}

// gateway is one usable gateway: an IP address, and the registry's value.
type gateway struct {
	addr netip.Addr
	gw   model.NetworkGateway
}

// gateways indexes the network gateways by network, and by network and
// cluster, as split horizon looks them up. A gateway given by host name
// is one gateway per address the name resolved to (none while it has
// not). It is immutable once built.
type gateways struct {
	all       []model.NetworkGateway
	resolved  map[string][]netip.Addr // what the host names resolved to
	byNetwork map[model.NetworkID]gatewayList
	byCluster map[networkCluster]gatewayList
	// scale is the least common multiple of the number of gateways of
	// each network and of each network and cluster: endpoint weights are
	// multiplied by it, so that a weight splits evenly over gateways.
	scale uint32
}

// gatewayList is the gateways of one network, or network and cluster.
type gatewayList struct {
	// n is the number of gateways; sidecar holds those with an mTLS
	// port, the ones sidecars use.
	n       int
	sidecar []gateway
}

func (l gatewayList) add(gw gateway) gatewayList {
	l.n++
	if gw.gw.Port != 0 {
		l.sidecar = append(l.sidecar, gw)
	}
	return l
}

type networkCluster struct {
	network model.NetworkID
	cluster model.ClusterID
}

func newGateways(all []model.NetworkGateway, resolved map[string][]netip.Addr) *gateways {
	g := &gateways{
		all:       all,
		resolved:  resolved,
		byNetwork: map[model.NetworkID]gatewayList{},
		byCluster: map[networkCluster]gatewayList{},
		scale:     1,
	}
	seen := map[gatewayKey]bool{}
	for _, gw := range all { // sorted by model.NetworkGateway.Compare
		addrs := resolved[gw.Address]
		if addr, err := netip.ParseAddr(gw.Address); err == nil {
			addrs = []netip.Addr{addr}
		}
		for _, addr := range addrs {
			addr = addr.Unmap()
			k := gatewayKey{gw.Network, gw.Cluster, addr, gw.Port, gw.HBONEPort, gw.ServiceAccount}
			if seen[k] {
				continue
			}
			seen[k] = true
			g.byNetwork[gw.Network] = g.byNetwork[gw.Network].add(gateway{addr, gw})
			nc := networkCluster{gw.Network, gw.Cluster}
			g.byCluster[nc] = g.byCluster[nc].add(gateway{addr, gw})
		}
	}
	for _, l := range g.byNetwork {
		g.scale = lcm(g.scale, uint32(l.n))
	}
	for _, l := range g.byCluster {
		g.scale = lcm(g.scale, uint32(l.n))
	}
	return g
}

// multiNetwork reports whether any network has a gateway: only then does
// split horizon apply.
func (g *gateways) multiNetwork() bool { return len(g.byNetwork) > 0 }

// forEndpoint returns the gateways through which a sidecar on another
// network reaches an endpoint of network n in cluster c, with those of
// the proxy's IP family: the gateways of that network and cluster, else
// of the network; of those, the ones with an mTLS port (sidecars do not
// speak HBONE to gateways). all is the number before the family filter.
// The slice is shared.
func (g *gateways) forEndpoint(n model.NetworkID, c model.ClusterID, fam IPFamilies) (usable []gateway, all int) {
	l, ok := g.byCluster[networkCluster{n, c}]
	if !ok {
		l = g.byNetwork[n]
	}
	gws := l.sidecar
	if fam == DualStack || !slices.ContainsFunc(gws, func(gw gateway) bool { return !fam.has(gw.addr) }) {
		return gws, len(gws)
	}
	usable = make([]gateway, 0, len(gws))
	for _, gw := range gws {
		if fam.has(gw.addr) {
			usable = append(usable, gw)
		}
	}
	return usable, len(gws)
}

// hostnames returns the gateways' addresses that are host names, sorted,
// without duplicates.
func hostnames(all []model.NetworkGateway) []string {
	var out []string
	for _, gw := range all {
		if _, err := netip.ParseAddr(gw.Address); err != nil && gw.Address != "" {
			out = append(out, gw.Address)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func lcm(a, b uint32) uint32 {
	if b == 0 {
		return a
	}
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
