package proxyview

import (
	"strings"

	"github.com/meshreg/meshreg/model"
)

// EndpointsKey is what a proxy's endpoints of one service depend on, as
// Snapshot.Endpoints computes them: two proxies with the same key for a
// service get the same endpoints of each of its ports from a snapshot,
// so that a server may compute them once for both. It is comparable.
type EndpointsKey struct {
	families IPFamilies
	network  model.NetworkID
	cluster  model.ClusterID
	locality model.Locality
	// node is the proxy's node name when the service's endpoints depend
	// on it (internalTrafficPolicy Local, PreferSameNode, topology
	// hints); "" otherwise.
	node string
	// labels are the values of the proxy's own failover labels when the
	// service fails over by labels; "" otherwise.
	labels string
}

// EndpointsKey returns the key of the proxy's endpoints of svc.
func (s *Snapshot) EndpointsKey(p *Proxy, svc *model.Service) EndpointsKey {
	k := EndpointsKey{families: p.IPFamilies(), network: p.Network, cluster: p.Cluster, locality: p.Locality}
	keys := failoverLabels(svc.TrafficDistribution)
	if svc.InternalTrafficPolicyLocal || s.conf.TopologyHints || len(keys) > 0 {
		k.node = p.NodeName
	}
	if len(keys) > 0 && len(p.Labels) > 0 {
		var b strings.Builder
		for _, l := range keys {
			b.WriteString(p.Labels[l])
			b.WriteByte(0)
		}
		k.labels = b.String()
	}
	return k
}
