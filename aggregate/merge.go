package aggregate

import (
	"slices"
	"sync"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// merger folds the events of several registries into one store: services
// merged per key across shards with precedence applied, endpoints kept per
// shard, workloads by key. The aggregate has one merger over every
// registry, and one per cluster that a cluster-scoped subscriber asked for.
type merger struct {
	st *store.Store

	// mu serialises writes from the member subscriptions, which deliver
	// on goroutines of their own, and guards contrib.
	mu sync.Mutex
	// contrib holds each shard's version of a service.
	contrib map[model.ServiceKey]shards.Map[*model.Service]
	// raw holds each shard's endpoints of a service as its registry
	// published them. The store gets them without the endpoints of ports
	// the merged service does not have: when clusters disagree on ports,
	// the merged service's ports rule (ARCHITECTURE.md decision 8).
	raw map[model.ServiceKey]shards.Map[rawList]
	// gateways holds each shard's network gateways; static those of the
	// mesh networks, given by address.
	gateways shards.Map[[]model.NetworkGateway]
	static   []model.NetworkGateway
	// clusterSets holds the ClusterSet hosts that Kubernetes shards
	// contribute, with the Service each imports, and derived the
	// endpoints the merger derives for them (see clusterset.go); empty
	// unless a member reads ServiceImports.
	clusterSets map[model.ServiceKey]*clusterSet
	derived     map[model.ServiceKey]shards.Map[rawList]
	// conflicted holds the Services whose exports conflict.
	conflicted map[model.ServiceKey]bool
}

// rawList is a shard's endpoints of a service as its registry published
// them. kept says that the store was handed the list itself, every
// endpoint having a port of the merged service (or the service being
// absent): a change of the merged service's ports pushes every shard's
// list again (setContribution), so kept always speaks of the current
// ports, and the endpoints a new list shares with a kept one, at the same
// place, need no second look (pushEndpoints).
type rawList struct {
	eps  []*model.Endpoint
	kept bool
	// recast, for a list the merger derived (see clusterset.go), holds
	// the copies it made; nil for a member's list.
	recast *index.Recast
}

func newMerger(static []model.NetworkGateway) *merger {
	m := &merger{
		st:      store.New(),
		contrib: map[model.ServiceKey]shards.Map[*model.Service]{},
		raw:     map[model.ServiceKey]shards.Map[rawList]{},
		static:  static,

		clusterSets: map[model.ServiceKey]*clusterSet{},
		derived:     map[model.ServiceKey]shards.Map[rawList]{},
		conflicted:  map[model.ServiceKey]bool{},
	}
	m.st.SetNetworkGateways(m.mergedGateways())
	return m
}

// apply folds one member event in. The caller holds m.mu.
func (m *merger) apply(shard model.ShardKey, ev registry.Event) {
	switch e := ev.(type) {
	case registry.ServiceEvent:
		svc := e.Service()
		key := svc.Key()
		if e.Type == model.EventDelete {
			m.setContribution(key, shard, nil)
		} else {
			m.setContribution(key, shard, svc)
		}
	case registry.EndpointsEvent:
		m.setEndpoints(e.Service, e.Shard, e.Endpoints)
	case registry.WorkloadEvent:
		if e.Type == model.EventDelete {
			m.st.DeleteWorkload(e.Previous.Key())
		} else {
			m.st.UpsertWorkload(e.Current)
		}
	case registry.NetworkGatewaysEvent:
		m.setGateways(shard, e.Gateways)
	case registry.ClusterEvent:
		if e.Type == model.EventDelete {
			m.st.DeleteCluster(e.Previous.ID)
		} else {
			m.st.SetCluster(*e.Current)
		}
	case registry.NamespaceEvent:
		if e.Type == model.EventDelete {
			m.st.DeleteNamespace(e.Previous.Key())
		} else {
			m.st.UpsertNamespace(e.Current)
		}
	case registry.GatewayEvent:
		if e.Type == model.EventDelete {
			m.st.DeleteGateway(e.Previous.Key())
		} else {
			m.st.UpsertGateway(e.Current)
		}
	}
}

// setGateways records a shard's network gateways (empty: none) and
// republishes the merged list. The caller holds m.mu.
func (m *merger) setGateways(shard model.ShardKey, gws []model.NetworkGateway) {
	if len(gws) == 0 {
		if !m.gateways.Has(shard) {
			return
		}
		m.gateways.Delete(shard)
	} else {
		m.gateways.Set(shard, gws)
	}
	m.st.SetNetworkGateways(m.mergedGateways())
}

// mergedGateways returns the mesh networks' gateways and every shard's,
// sorted and without duplicates. The caller holds m.mu, or is newMerger.
func (m *merger) mergedGateways() []model.NetworkGateway {
	out := slices.Clone(m.static)
	for _, gws := range m.gateways.All() {
		out = append(out, gws...)
	}
	return model.SortGateways(out)
}

// setContribution records shard's version of a service (nil: none) and
// republishes the merged service. The caller holds m.mu.
func (m *merger) setContribution(key model.ServiceKey, shard model.ShardKey, svc *model.Service) {
	byShard := m.contrib[key]
	if svc == nil {
		if !byShard.Has(shard) {
			return
		}
		byShard.Delete(shard)
	} else {
		byShard.Set(shard, svc)
	}
	if byShard.Len() == 0 {
		delete(m.contrib, key)
	} else {
		m.contrib[key] = byShard
	}
	if key.Hostname.IsClusterSet() {
		m.setClusterSetContribution(key, shard)
		return
	}
	merged, diags := mergeService(byShard)
	m.publish(key, merged, diags)
	m.setExportConflicts(key, byShard)
	if len(m.clusterSets) > 0 {
		m.baseChanged(key)
	}
}

// publish makes merged (nil: none) the store's service of key, with the
// merge's diagnostics, and pushes every shard's endpoints again when the
// service's ports changed. The caller holds m.mu.
func (m *merger) publish(key model.ServiceKey, merged *model.Service, diags []model.Diagnostic) {
	m.st.SetDiagnostics(key.String(), diags)
	prev := m.st.ServiceByKey(key)
	if merged == nil {
		m.st.DeleteService(key)
		return
	}
	m.st.UpsertService(merged)
	if prev == nil || !slices.Equal(prev.Ports, merged.Ports) {
		for _, shard := range m.listShards(key) {
			m.pushEndpoints(key, shard, merged, rawList{})
		}
	}
}

// setEndpoints records a shard's endpoints of a service (empty: none) and
// hands the store those the merged service has ports for. The caller
// holds m.mu.
func (m *merger) setEndpoints(key model.ServiceKey, shard model.ShardKey, eps []*model.Endpoint) {
	byShard := m.raw[key]
	prev, _ := byShard.Get(shard)
	if len(eps) == 0 {
		byShard.Delete(shard)
	} else {
		byShard.Set(shard, rawList{eps: eps})
	}
	if byShard.Len() == 0 {
		delete(m.raw, key)
	} else {
		m.raw[key] = byShard
	}
	if len(m.clusterSets) == 0 {
		m.pushEndpoints(key, shard, m.st.ServiceByKey(key), prev)
		return
	}
	if !m.derives(key, shard) {
		m.pushEndpoints(key, shard, m.st.ServiceByKey(key), prev)
	} // else the store has the merger's list, not the member's
	m.baseEndpointsChanged(key, shard)
}

// pushEndpoints hands the store a shard's endpoints of a service, keeping
// those of ports svc has (all of them while svc is absent: the store holds
// them back until it arrives). When every endpoint is kept, which is the
// usual case, the member's published list itself is handed on: it is
// sorted, so the store keeps it without writing to it. prev is the
// shard's list before this one, if it was kept: an endpoint that prev
// holds where an index.Trail along it looks (at the same index, or a few
// places on) is not read again. A change to a few endpoints of a long
// list (a readiness flip, a pod's labels, an endpoint added or removed)
// comes so, and the endpoints it leaves alone are not read. The caller
// holds m.mu.
func (m *merger) pushEndpoints(key model.ServiceKey, shard model.ShardKey, svc *model.Service, prev rawList) {
	raw, ok := m.listOf(key, shard)
	var trail index.Trail // along prev, if kept: its endpoints have ports svc has
	if prev.kept {
		trail = index.NewTrail(prev.eps)
	}
	served := func(ep *model.Endpoint) bool {
		return slices.ContainsFunc(svc.Ports, func(p model.Port) bool { return p.Name == ep.ServicePortName })
	}
	first := len(raw.eps) // the first endpoint left out, if any
	if svc != nil {
		for i, ep := range raw.eps {
			if !trail.Holds(i, ep) && !served(ep) {
				first = i
				break
			}
		}
	}
	kept := first == len(raw.eps)
	if ok {
		raw.kept = kept
		m.keepList(key, shard, raw)
	}
	if kept {
		m.st.SetEndpoints(shard, key, raw.eps)
		return
	}
	// The endpoints before first were read and kept already.
	out := append(make([]*model.Endpoint, 0, len(raw.eps)), raw.eps[:first]...)
	for i := first + 1; i < len(raw.eps); i++ {
		if ep := raw.eps[i]; trail.Holds(i, ep) || served(ep) {
			out = append(out, ep)
		}
	}
	m.st.SetEndpoints(shard, key, out)
}

// removeShard drops everything a shard contributed and returns the
// workloads it deleted. The caller holds m.mu.
func (m *merger) removeShard(shard model.ShardKey) []*model.WorkloadInstance {
	keys := make([]model.ServiceKey, 0)
	for key, byShard := range m.contrib {
		if byShard.Has(shard) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		m.setContribution(key, shard, nil)
	}
	keys = keys[:0]
	for key, byShard := range m.raw {
		if byShard.Has(shard) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		m.setEndpoints(key, shard, nil)
	}
	m.setGateways(shard, nil)
	if shard.Provider == model.Kubernetes {
		m.st.DeleteMetadata(shard.Cluster) // only kube registries publish it
	}
	var deleted []*model.WorkloadInstance
	for _, w := range m.st.Workloads() {
		if workloadShard(w) == shard {
			m.st.DeleteWorkload(w.Key())
			deleted = append(deleted, w)
		}
	}
	return deleted
}

// prune drops what a shard contributed that reg no longer has: used when a
// replacement registry has synced, to remove what only the old one knew.
// It returns the workloads it deleted. The caller holds m.mu.
func (m *merger) prune(shard model.ShardKey, reg registry.Discovery) []*model.WorkloadInstance {
	keys := make([]model.ServiceKey, 0)
	for key, byShard := range m.contrib {
		if byShard.Has(shard) && reg.ServiceByKey(key) == nil {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		m.setContribution(key, shard, nil)
	}
	var stale []model.ServiceKey
	for key, byShard := range m.raw {
		if byShard.Has(shard) && len(reg.Endpoints(key, registry.EndpointQuery{})) == 0 {
			stale = append(stale, key)
		}
	}
	slices.SortFunc(stale, model.ServiceKey.Compare)
	for _, key := range stale {
		m.setEndpoints(key, shard, nil)
	}
	var gws []model.NetworkGateway
	if gd, ok := reg.(registry.GatewayDiscovery); ok {
		gws = gd.NetworkGateways()
	}
	m.setGateways(shard, gws)
	if shard.Provider == model.Kubernetes {
		md, _ := reg.(registry.MetadataDiscovery) // nil: it holds none
		m.pruneMetadata(shard.Cluster, md)
	}
	var deleted []*model.WorkloadInstance
	for _, w := range m.st.Workloads() {
		if workloadShard(w) != shard {
			continue
		}
		if !slices.ContainsFunc(workloadsAt(reg, w), func(x *model.WorkloadInstance) bool { return x.Key() == w.Key() }) {
			m.st.DeleteWorkload(w.Key())
			deleted = append(deleted, w)
		}
	}
	return deleted
}

func workloadsAt(reg registry.Discovery, w *model.WorkloadInstance) []*model.WorkloadInstance {
	if len(w.Endpoint.Addresses) > 0 {
		return reg.WorkloadsByIP(w.Endpoint.Addresses[0])
	}
	return reg.Workloads()
}

// workloadShard returns the shard a workload instance comes from: Pods
// from the Kubernetes registry of their cluster, WorkloadEntries from the
// External one.
func workloadShard(w *model.WorkloadInstance) model.ShardKey {
	p := model.Kubernetes
	if w.Kind == model.KindWorkloadEntry {
		p = model.External
	}
	return model.ShardKey{Provider: p, Cluster: w.Endpoint.Cluster}
}

// pruneMetadata drops the cluster data, namespaces and Gateways of a
// cluster that md, its replacement registry, does not hold (nil: none).
// The caller holds m.mu.
func (m *merger) pruneMetadata(cluster model.ClusterID, md registry.MetadataDiscovery) {
	if md == nil {
		m.st.DeleteMetadata(cluster)
		return
	}
	if !slices.ContainsFunc(md.Clusters(), func(c model.Cluster) bool { return c.ID == cluster }) {
		m.st.DeleteCluster(cluster)
	}
	namespaces := map[model.NamespaceKey]bool{}
	for _, ns := range md.Namespaces() {
		namespaces[ns.Key()] = true
	}
	for _, ns := range m.st.Namespaces() {
		if ns.Cluster == cluster && !namespaces[ns.Key()] {
			m.st.DeleteNamespace(ns.Key())
		}
	}
	gateways := map[model.GatewayKey]bool{}
	for _, gw := range md.Gateways() {
		gateways[gw.Key()] = true
	}
	for _, gw := range m.st.Gateways() {
		if gw.Cluster == cluster && !gateways[gw.Key()] {
			m.st.DeleteGateway(gw.Key())
		}
	}
}
