package aggregate

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
)

// ClusterSet hosts (Kubernetes Multi-Cluster Services, kube.MCSOptions):
// a kube controller whose cluster imports a Service contributes its
// name.namespace.svc.clusterset.local service, with the import's VIPs,
// and that cluster's endpoints of it. The merged host is Istio's: the
// merged Service it imports (its base: the Kubernetes Service of that
// name and namespace, from whichever clusters have it) under the
// ClusterSet hostname, with every importing cluster's VIPs; none while
// no cluster has the Service. Its endpoints are every cluster's: an
// importing cluster's as its kube controller gives them, and those of a
// cluster that has the Service without importing it as the merger
// derives them, the Service's endpoints there discoverable from that
// cluster alone (Istio's rule: a cluster's own import governs whether
// its endpoints reach other clusters under the ClusterSet host). None of
// this runs while no member contributes a ClusterSet host.

// clusterSet is the merger's state of one ClusterSet host: the key of its
// base, once found.
type clusterSet struct {
	base    model.ServiceKey
	hasBase bool
}

// clusterSetKeyOf returns the key of the ClusterSet host that imports the
// Kubernetes Service of key (name.namespace.svc.<suffix>), and false for
// a hostname of another form.
func clusterSetKeyOf(key model.ServiceKey) (model.ServiceKey, bool) {
	name, rest, ok := strings.Cut(string(key.Hostname), ".")
	if !ok || name == "" || !strings.HasPrefix(rest, key.Namespace+".svc.") || key.Hostname.IsClusterSet() {
		return model.ServiceKey{}, false
	}
	return model.ServiceKey{Namespace: key.Namespace, Hostname: model.ClusterSetHostname(name, key.Namespace)}, true
}

// kubeContributes reports whether a Kubernetes shard contributes to a
// service.
func kubeContributes(byShard shards.Map[*model.Service]) bool {
	for sh := range byShard.All() {
		return sh.Provider == model.Kubernetes // Kubernetes shards come first
	}
	return false
}

// setClusterSetContribution merges a ClusterSet host again after shard's
// contribution to it changed, and derives shard's endpoints of it anew.
// The caller holds m.mu.
func (m *merger) setClusterSetContribution(key model.ServiceKey, shard model.ShardKey) {
	byShard := m.contrib[key]
	if !kubeContributes(byShard) {
		if _, ok := m.clusterSets[key]; ok {
			delete(m.clusterSets, key)
			m.dropDerived(key)
		}
		merged, diags := mergeService(byShard) // ServiceEntries of the host, if any
		m.publish(key, merged, diags)
		return
	}
	cs := m.clusterSets[key]
	if cs == nil {
		cs = &clusterSet{}
		m.clusterSets[key] = cs
		m.findBase(key, cs)
		m.mergeClusterSet(key)
		m.deriveAll(key)
		return
	}
	m.mergeClusterSet(key)
	if shard.Provider == model.Kubernetes {
		m.derive(key, shard.Cluster)
	}
}

// findBase looks for the base of a ClusterSet host among the services
// with contributions: the Kubernetes Service it imports, the first by
// hostname when several domain suffixes give one. The caller holds m.mu.
func (m *merger) findBase(key model.ServiceKey, cs *clusterSet) {
	cs.hasBase = false
	for k, byShard := range m.contrib {
		if k.Namespace != key.Namespace || !kubeContributes(byShard) {
			continue
		}
		if csKey, ok := clusterSetKeyOf(k); ok && csKey == key && (!cs.hasBase || k.Hostname < cs.base.Hostname) {
			cs.base, cs.hasBase = k, true
		}
	}
}

// baseChanged merges the ClusterSet host of a Kubernetes Service again
// after the Service's contributions changed, and when the Service became
// or stopped being its base, derives its endpoints anew. The base changes
// only when the Service comes with a hostname before the base's, or is
// the base and goes. The caller holds m.mu.
func (m *merger) baseChanged(key model.ServiceKey) {
	csKey, ok := clusterSetKeyOf(key)
	if !ok {
		return
	}
	cs := m.clusterSets[csKey]
	if cs == nil {
		return
	}
	was, wasBase := cs.base, cs.hasBase
	switch contrib := m.contrib[key]; {
	case kubeContributes(contrib) && (!cs.hasBase || key.Hostname < cs.base.Hostname):
		cs.base, cs.hasBase = key, true
	case !kubeContributes(contrib) && cs.hasBase && cs.base == key:
		m.findBase(csKey, cs) // the base is gone: another, if any (a scan, but rare)
	}
	m.mergeClusterSet(csKey)
	if wasBase != cs.hasBase || was != cs.base {
		m.deriveAll(csKey)
	}
}

// baseEndpointsChanged derives a cluster's endpoints of the ClusterSet
// host of a Service again after the cluster's endpoints of the Service
// changed. The caller holds m.mu.
func (m *merger) baseEndpointsChanged(key model.ServiceKey, shard model.ShardKey) {
	if shard.Provider != model.Kubernetes || key.Hostname.IsClusterSet() {
		return
	}
	csKey, ok := clusterSetKeyOf(key)
	if !ok {
		return
	}
	if cs := m.clusterSets[csKey]; cs != nil && cs.hasBase && cs.base == key {
		m.derive(csKey, shard.Cluster)
	}
}

// mergeClusterSet publishes a ClusterSet host merged from its
// contributions and its base. The caller holds m.mu.
func (m *merger) mergeClusterSet(key model.ServiceKey) {
	cs := m.clusterSets[key]
	var base *model.Service
	if cs.hasBase {
		base = m.st.ServiceByKey(cs.base)
	}
	merged, diags := mergeClusterSetService(key, m.contrib[key], base)
	m.publish(key, merged, diags)
}

// mergeClusterSetService merges a ClusterSet host: base, the merged
// Service it imports, under the host's name, with the VIPs of every
// Kubernetes shard's contribution, no external addresses, and
// Passthrough when no contribution has VIPs (headless imports). Without
// a base, or with one that is not a Kubernetes Service, the host is not
// Istio's service: the ServiceEntries of its name, if any, are merged
// instead, and each importing cluster is told.
func mergeClusterSetService(key model.ServiceKey, byShard shards.Map[*model.Service], base *model.Service) (*model.Service, []model.Diagnostic) {
	var diags []model.Diagnostic
	if base == nil || base.Provider != model.Kubernetes {
		var external shards.Map[*model.Service]
		for sh, svc := range byShard.All() {
			if sh.Provider == model.Kubernetes {
				diags = append(diags, model.Diagnostic{
					Severity: model.Warning, Kind: "ServiceImport", Namespace: svc.Namespace, Name: svc.Name, Cluster: sh.Cluster,
					Message: fmt.Sprintf("no cluster has the Service %s/%s: no %s service until one does", svc.Namespace, svc.Name, key.Hostname),
				})
				continue
			}
			external.Set(sh, svc)
		}
		merged, more := mergeService(external)
		return merged, append(diags, more...)
	}
	out := base.DeepCopy()
	out.Hostname = key.Hostname
	out.Addresses, out.ExternalAddresses = nil, nil
	for sh, svc := range byShard.All() {
		if sh.Provider != model.Kubernetes {
			diags = append(diags, model.Diagnostic{
				Severity: model.Warning, Kind: "ServiceEntry", Namespace: svc.Namespace, Name: svc.Name, Cluster: sh.Cluster,
				Message: fmt.Sprintf("host %s is the ClusterSet host of the Kubernetes Service %s/%s, which takes precedence; this entry's service and endpoints for the host are ignored",
					key.Hostname, base.Namespace, base.Name),
			})
			continue
		}
		for c, vips := range svc.Addresses {
			if out.Addresses == nil {
				out.Addresses = map[model.ClusterID][]netip.Prefix{}
			}
			out.Addresses[c] = slices.Clone(vips)
		}
	}
	if len(out.Addresses) == 0 {
		out.Resolution = model.Passthrough
	}
	return out, diags
}

// derives reports whether the store gets the merger's derived list of a
// shard's endpoints of a service instead of the member's: for a
// ClusterSet host that Kubernetes shards contribute, from a Kubernetes
// shard that does not. (A member publishes endpoints only of services it
// has, so such a shard's own list is empty but for a moment.)
func (m *merger) derives(key model.ServiceKey, shard model.ShardKey) bool {
	if shard.Provider != model.Kubernetes || m.clusterSets[key] == nil {
		return false
	}
	contrib := m.contrib[key]
	return !contrib.Has(shard)
}

// listOf returns the list of a shard's endpoints of a service that the
// store gets (before ports are filtered, see pushEndpoints): the merger's
// derived list where it derives one, else the member's.
func (m *merger) listOf(key model.ServiceKey, shard model.ShardKey) (rawList, bool) {
	if len(m.clusterSets) > 0 && m.derives(key, shard) {
		d := m.derived[key]
		return d.Get(shard)
	}
	byShard := m.raw[key]
	return byShard.Get(shard)
}

// keepList writes back the list listOf returned, present in its map.
func (m *merger) keepList(key model.ServiceKey, shard model.ShardKey, l rawList) {
	if len(m.clusterSets) > 0 && m.derives(key, shard) {
		d := m.derived[key]
		d.Set(shard, l) // in place: the shard is present
		return
	}
	byShard := m.raw[key]
	byShard.Set(shard, l) // in place: the shard is present
}

// listShards returns the shards with a list of a service's endpoints,
// the member's or the merger's.
func (m *merger) listShards(key model.ServiceKey) []model.ShardKey {
	byShard := m.raw[key]
	out := byShard.Keys()
	if d, ok := m.derived[key]; ok {
		for _, sh := range d.Keys() {
			if !byShard.Has(sh) {
				out = append(out, sh)
			}
		}
		slices.SortFunc(out, model.ShardKey.Compare)
	}
	return out
}

// derive brings the store's list of a cluster's endpoints of a ClusterSet
// host up to date: for a cluster that contributes the host, the member's
// own list; for one that does not, the merger's, the base's endpoints
// there, each discoverable from the cluster alone. The caller holds m.mu.
func (m *merger) derive(key model.ServiceKey, cluster model.ClusterID) {
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: cluster}
	d := m.derived[key]
	cur, had := d.Get(shard)
	var src []*model.Endpoint
	if cs := m.clusterSets[key]; cs != nil && cs.hasBase && m.derives(key, shard) {
		baseRaw := m.raw[cs.base]
		base, _ := baseRaw.Get(shard)
		src = base.eps
	}
	svc := m.st.ServiceByKey(key)
	if len(src) == 0 {
		if had {
			d.Delete(shard)
			if d.Len() == 0 {
				delete(m.derived, key)
			} else {
				m.derived[key] = d
			}
		}
		if own := m.raw[key]; had || own.Has(shard) {
			m.pushEndpoints(key, shard, svc, rawList{}) // the member's list, or none
		}
		return
	}
	recast := cur.recast
	if recast == nil {
		recast = &index.Recast{}
	}
	eps := recast.Apply(src, model.DiscoverableFromSameCluster)
	if had && slices.Equal(cur.eps, eps) {
		return
	}
	d.Set(shard, rawList{eps: eps, recast: recast})
	m.derived[key] = d
	m.pushEndpoints(key, shard, svc, cur)
}

// deriveAll derives the endpoints of a ClusterSet host for every
// Kubernetes cluster with a list of its own, a derived list, or
// endpoints of its base. The caller holds m.mu.
func (m *merger) deriveAll(key model.ServiceKey) {
	clusters := map[model.ClusterID]bool{}
	for _, sh := range m.listShards(key) {
		if sh.Provider == model.Kubernetes {
			clusters[sh.Cluster] = true
		}
	}
	if cs := m.clusterSets[key]; cs != nil && cs.hasBase {
		base := m.raw[cs.base]
		for sh := range base.All() {
			if sh.Provider == model.Kubernetes {
				clusters[sh.Cluster] = true
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(clusters)) {
		m.derive(key, c)
	}
}

// dropDerived removes the merger's lists of a ClusterSet host no
// Kubernetes shard contributes any more (m.clusterSets no longer has it):
// the store gets the members' lists again. The caller holds m.mu.
func (m *merger) dropDerived(key model.ServiceKey) {
	d, ok := m.derived[key]
	if !ok {
		return
	}
	delete(m.derived, key)
	svc := m.st.ServiceByKey(key)
	for _, sh := range d.Keys() {
		m.pushEndpoints(key, sh, svc, rawList{})
	}
}
