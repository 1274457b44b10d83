package proxyview

import (
	"cmp"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/model"
)

// The topology labels failover priorities compare, as the registries add
// them to endpoints.
const (
	labelNetwork  = "topology.istio.io/network"
	labelCluster  = "topology.istio.io/cluster"
	labelRegion   = "topology.kubernetes.io/region"
	labelZone     = "topology.kubernetes.io/zone"
	labelSubzone  = "topology.istio.io/subzone"
	labelHostname = "kubernetes.io/hostname"
)

// failoverLabels are the labels Istio's locality failover compares for a
// traffic distribution, most significant first; nil for none.
func failoverLabels(td string) []string {
	switch td {
	case model.TrafficPreferSameZone:
		return []string{labelNetwork, labelRegion, labelZone}
	case model.TrafficPreferSameNode:
		return []string{labelNetwork, labelRegion, labelZone, labelSubzone, labelHostname}
	}
	return nil
}

// topologyLabels returns the proxy's labels with the topology labels its
// fields give (as Istio adds them to a proxy's labels).
func (p *Proxy) topologyLabels() map[string]string {
	out := make(map[string]string, len(p.Labels)+6)
	for k, v := range p.Labels {
		out[k] = v
	}
	subzone, _, _ := strings.Cut(p.Locality.Subzone, "/")
	for _, l := range [...]struct{ k, v string }{
		{labelCluster, string(p.Cluster)}, {labelNetwork, string(p.Network)}, {labelRegion, p.Locality.Region},
		{labelZone, p.Locality.Zone}, {labelSubzone, subzone}, {labelHostname, p.NodeName},
	} {
		if l.v != "" {
			out[l.k] = l.v
		}
	}
	return out
}

// priority is an endpoint's failover priority for a proxy, before
// compaction, as Istio's failover priority computes it: 0 when every
// label matches the proxy's; else, at the first label that differs, the
// number of labels after it and that one; a different network (the first
// label) does not stop the comparison but adds the number of labels.
func priority(proxy, endpoint map[string]string, labels []string) int {
	p, adjust := 0, 0
	for j, l := range labels {
		if proxy[l] == endpoint[l] {
			continue
		}
		if j == 0 && l == labelNetwork {
			adjust = len(labels)
			continue
		}
		p = len(labels) - j
		break
	}
	return p + adjust
}

// applyFailover splits each locality's endpoints by failover priority for
// a service with a traffic distribution, as Istio does (its
// LocalityLbSetting forced on, failoverPriority by the labels of
// failoverLabels), and numbers the priorities from 0 without gaps. labels
// returns an endpoint's labels.
func applyFailover(p *Proxy, les []LocalityEndpoints, td string, labels func(Endpoint) map[string]string) []LocalityEndpoints {
	keys := failoverLabels(td)
	if keys == nil || len(les) == 0 {
		return les
	}
	proxy := p.topologyLabels()
	var out []LocalityEndpoints
	for _, le := range les {
		byPriority := map[int][]Endpoint{}
		for _, ep := range le.Endpoints {
			pr := priority(proxy, labels(ep), keys)
			byPriority[pr] = append(byPriority[pr], ep)
		}
		for _, pr := range slices.Sorted(mapKeys(byPriority)) {
			g := LocalityEndpoints{Locality: le.Locality, Priority: uint32(pr), Endpoints: byPriority[pr]}
			for _, ep := range g.Endpoints {
				g.Weight = addWeight(g.Weight, ep.Weight)
			}
			out = append(out, g)
		}
	}
	// Number the priorities used 0, 1, 2...
	used := map[uint32]bool{}
	for _, g := range out {
		used[g.Priority] = true
	}
	rank := map[uint32]uint32{}
	for i, pr := range slices.Sorted(mapKeys(used)) {
		rank[pr] = uint32(i)
	}
	for i := range out {
		out[i].Priority = rank[out[i].Priority]
	}
	return out
}

// hinted keeps, of a service port's endpoints, those its topology hints
// give the proxy, as kube-proxy does: the endpoints hinted for the proxy's
// node when every Healthy endpoint has node hints and one names the
// node; else those hinted for its zone when every Healthy endpoint has
// zone hints and one names the zone; else all of them.
func hinted(p *Proxy, eps []*model.Endpoint) []*model.Endpoint {
	ready, nodesAll, zonesAll, forNode, forZone := false, true, true, false, false
	for _, ep := range eps {
		if ep.Health != model.Healthy {
			continue
		}
		ready = true
		h := ep.Hints
		if h == nil || len(h.ForNodes) == 0 {
			nodesAll = false
		} else if p.NodeName != "" && slices.Contains(h.ForNodes, p.NodeName) {
			forNode = true
		}
		if h == nil || len(h.ForZones) == 0 {
			zonesAll = false
		} else if p.Locality.Zone != "" && slices.Contains(h.ForZones, p.Locality.Zone) {
			forZone = true
		}
	}
	var keep func(*model.Hints) bool
	switch {
	case !ready:
		return eps
	case nodesAll && forNode:
		keep = func(h *model.Hints) bool { return h != nil && slices.Contains(h.ForNodes, p.NodeName) }
	case zonesAll && forZone:
		keep = func(h *model.Hints) bool { return h != nil && slices.Contains(h.ForZones, p.Locality.Zone) }
	default:
		return eps
	}
	out := make([]*model.Endpoint, 0, len(eps))
	for _, ep := range eps {
		if keep(ep.Hints) {
			out = append(out, ep)
		}
	}
	return out
}

// compareLocalities orders load assignment groups by locality, then
// priority.
func compareLocalities(a, b LocalityEndpoints) int {
	return cmp.Or(cmp.Compare(a.Locality.String(), b.Locality.String()), cmp.Compare(a.Priority, b.Priority))
}
