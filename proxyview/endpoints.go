package proxyview

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/model"
)

// LocalityEndpoints are the endpoints of one locality, as a load
// assignment groups them.
type LocalityEndpoints struct {
	Locality model.Locality
	// Priority is the failover priority, 0 the highest, for a service
	// with a traffic distribution (see the package doc); 0 otherwise.
	Priority uint32
	// Weight is the sum of the endpoints' weights, saturating at the
	// largest uint32.
	Weight    uint32
	Endpoints []Endpoint
}

// Endpoint is one endpoint as a proxy should use it: a workload it
// reaches directly, or a network gateway standing in for the workloads of
// its network that the proxy cannot reach.
type Endpoint struct {
	// Address and Port are where the proxy connects. For an endpoint
	// that is a unix domain socket Address is invalid and Port 0.
	Address netip.Addr
	Port    uint32
	// Path is the path of a unix domain socket (a ServiceEntry endpoint
	// addressed "unix:///path"), for a proxy on the workload's host;
	// "" for an endpoint addressed by IP.
	Path string
	// AdditionalAddresses are a dual-stack workload's other addresses,
	// with Options.DualStack; nil otherwise and for gateways.
	AdditionalAddresses []netip.Addr
	// Weight is the load-balancing weight, at least 1. With network
	// gateways in the mesh every weight is scaled by the same factor, so
	// that a gateway's weight is the sum of those of the endpoints it
	// stands for.
	Weight uint32
	// Health is Healthy, Unhealthy or Draining.
	Health model.HealthStatus
	// Workload is the registry's endpoint, for a direct endpoint; nil
	// for a gateway.
	Workload *model.Endpoint
	// Gateway is the gateway, for a gateway endpoint; nil otherwise.
	Gateway *model.NetworkGateway
}

// endpointsFor computes a proxy's endpoints of one port of a service: the
// registry's endpoints filtered and, across networks, replaced by
// gateways, as Istio's EDS builds them for a sidecar.
func (s *Snapshot) endpointsFor(p *Proxy, e *entry, port string) []LocalityEndpoints {
	if _, ok := e.svc.PortByName(port); !ok {
		return nil
	}
	fam := p.IPFamilies()
	multi := s.gateways.multiNetwork()
	scale := uint32(1)
	if multi {
		scale = s.gateways.scale
	}
	sendUnhealthy := !s.conf.OmitUnhealthyEndpoints || forcesUnhealthy(e.svc)
	persistent := e.svc.Labels[PersistentSessionLabel] != ""

	var out []LocalityEndpoints
	byLocality := map[model.Locality]int{}
	// gatewayWeights holds, per locality, the weight each gateway has
	// gathered.
	var gatewayWeights map[model.Locality]map[gateway]uint32
	group := func(l model.Locality) *LocalityEndpoints {
		i, ok := byLocality[l]
		if !ok {
			i = len(out)
			byLocality[l] = i
			out = append(out, LocalityEndpoints{Locality: l})
		}
		return &out[i]
	}

	var kept []*model.Endpoint
	var health []model.HealthStatus
	for _, ep := range e.eps {
		if ep.ServicePortName != port || (ep.Hostname != "" && unixPath(ep) == "") {
			continue // another port, or addressed by a DNS name
		}
		if h, ok := s.keep(p, e, ep, multi, sendUnhealthy, persistent); ok {
			kept = append(kept, ep)
			health = append(health, h)
		}
	}
	if s.conf.TopologyHints {
		if h := hinted(p, kept); len(h) < len(kept) {
			health = keepHealth(kept, h, health)
			kept = h
		}
	}
	for i, ep := range kept {
		health := health[i]
		weight := scaleWeight(max(ep.Weight, 1), scale)
		if multi {
			gws, n := s.gateways.forEndpoint(ep.Network, ep.Cluster, fam)
			force := p.Network == "" && ep.Network != "" && n > 0
			direct := !force && (p.inNetwork(ep.Network) || (n == 0 && s.conf.DirectWithoutGateway))
			if !direct {
				if len(gws) == 0 || ep.TLSMode != model.TLSIstio {
					// No gateway the proxy can use, or the workload
					// cannot take the mTLS the gateway routes by.
					continue
				}
				if gatewayWeights == nil {
					gatewayWeights = map[model.Locality]map[gateway]uint32{}
				}
				w := gatewayWeights[ep.Locality]
				if w == nil {
					w = map[gateway]uint32{}
					gatewayWeights[ep.Locality] = w
					group(ep.Locality) // the locality's place, in order of first endpoint
				}
				for _, gw := range gws {
					w[gw] = addWeight(w[gw], weight/uint32(len(gws)))
				}
				continue
			}
		}
		var out Endpoint
		switch {
		case len(ep.Addresses) > 0:
			out = Endpoint{Address: ep.Addresses[0].Unmap(), Port: ep.Port}
		case unixPath(ep) != "":
			out = Endpoint{Path: unixPath(ep)}
		default:
			continue // an address only a gateway could stand for
		}
		out.Weight, out.Health, out.Workload = weight, health, ep
		if s.conf.DualStack && len(ep.Addresses) > 1 {
			out.AdditionalAddresses = ep.Addresses[1:]
		}
		g := group(ep.Locality)
		g.Endpoints = append(g.Endpoints, out)
	}

	for l, weights := range gatewayWeights {
		g := group(l)
		gws := make([]gateway, 0, len(weights))
		for gw := range weights {
			gws = append(gws, gw)
		}
		slices.SortFunc(gws, func(a, b gateway) int { return cmp.Or(a.gw.Compare(b.gw), a.addr.Compare(b.addr)) })
		for _, gw := range gws {
			g.Endpoints = append(g.Endpoints, Endpoint{
				Address: gw.addr, Port: gw.gw.Port, Weight: max(weights[gw], 1), Health: model.Healthy, Gateway: &gw.gw,
			})
		}
	}

	out = slices.DeleteFunc(out, func(g LocalityEndpoints) bool { return len(g.Endpoints) == 0 })
	for i := range out {
		for _, ep := range out[i].Endpoints {
			out[i].Weight = addWeight(out[i].Weight, ep.Weight)
		}
	}
	slices.SortStableFunc(out, compareLocalities)
	out = applyFailover(p, out, e.svc.TrafficDistribution, endpointLabels)
	slices.SortStableFunc(out, compareLocalities)
	return out
}

// endpointLabels returns the labels failover compares for an endpoint:
// the workload's, or for a gateway its network and cluster (as Istio
// labels the endpoints it makes for gateways).
func endpointLabels(ep Endpoint) map[string]string {
	if ep.Workload != nil {
		return ep.Workload.Labels
	}
	return map[string]string{labelNetwork: string(ep.Gateway.Network), labelCluster: string(ep.Gateway.Cluster)}
}

// keepHealth returns the healths of the endpoints of sub, a subsequence
// of all whose healths are health.
func keepHealth(all, sub []*model.Endpoint, health []model.HealthStatus) []model.HealthStatus {
	out := make([]model.HealthStatus, 0, len(sub))
	j := 0
	for i, ep := range all {
		if j < len(sub) && sub[j] == ep {
			out = append(out, health[i])
			j++
		}
	}
	return out
}

// keep applies the filters of Istio's EDS to one endpoint, and returns
// the health to send it with.
func (s *Snapshot) keep(p *Proxy, e *entry, ep *model.Endpoint, multi, sendUnhealthy, persistent bool) (model.HealthStatus, bool) {
	switch {
	case e.svc.InternalTrafficPolicyLocal && ep.NodeName != p.NodeName:
		return 0, false // internalTrafficPolicy Local: the proxy's node only
	case e.clusterLocal && ep.Cluster != p.Cluster:
		return 0, false // cluster-local: the proxy's cluster only
	case !ep.DiscoverableFrom(p.Cluster):
		return 0, false // Multi-Cluster Services: its own cluster's proxies only
	case len(ep.Addresses) == 0 && unixPath(ep) == "" && (!multi || p.inNetwork(ep.Network)):
		return 0, false // no address, and no gateway would stand for it
	case ep.Health == model.Unhealthy && !sendUnhealthy:
		return 0, false
	case ep.Health == model.Terminating:
		return 0, false // never sent, not even as unhealthy
	}
	health := ep.Health
	if ep.Labels[DrainingLabel] != "" {
		health = model.Draining
	}
	if health == model.Draining && !persistent {
		return 0, false // draining endpoints serve only existing sessions
	}
	return health, true
}

// unixPath returns the socket path of an endpoint addressed by a unix
// domain socket ("unix:///path"); "" for any other.
func unixPath(ep *model.Endpoint) string {
	path, _ := strings.CutPrefix(ep.Hostname, "unix://")
	if path == ep.Hostname {
		return ""
	}
	return path
}

// forcesUnhealthy reports whether a service's clients need its unhealthy
// endpoints whatever the options say: with a traffic distribution they
// tell when to spill over to other zones.
func forcesUnhealthy(svc *model.Service) bool { return svc.TrafficDistribution != "" }

func scaleWeight(w, scale uint32) uint32 {
	if w > math.MaxUint32/scale {
		return math.MaxUint32
	}
	return w * scale
}

// addWeight adds without overflowing: load assignments reject weights
// whose sum exceeds the largest uint32, so a sum saturates.
func addWeight(a, b uint32) uint32 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint32
}
