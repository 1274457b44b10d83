package store

import (
	"cmp"
	"maps"
	"slices"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// metadata is the cluster metadata a store holds: clusters' data,
// namespaces and Gateway API Gateways, by key.
type metadata struct {
	clusters   map[model.ClusterID]*model.Cluster
	namespaces map[model.NamespaceKey]*model.Namespace
	gateways   map[model.GatewayKey]*model.Gateway
}

// SetCluster adds or replaces a cluster's data, publishing a
// ClusterEvent when it changed.
func (s *Store) SetCluster(c model.Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.meta.clusters[c.ID]
	if prev != nil && *prev == c {
		return
	}
	if s.meta.clusters == nil {
		s.meta.clusters = map[model.ClusterID]*model.Cluster{}
	}
	s.meta.clusters[c.ID] = &c
	s.notifier.Notify(registry.ClusterEvent{Type: upsertType(prev != nil), Previous: prev, Current: &c})
}

// DeleteCluster removes a cluster's data.
func (s *Store) DeleteCluster(id model.ClusterID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.meta.clusters[id]; prev != nil {
		delete(s.meta.clusters, id)
		s.notifier.Notify(registry.ClusterEvent{Type: model.EventDelete, Previous: prev})
	}
}

// UpsertNamespace adds or replaces a namespace; it publishes nothing when
// an equal one is there.
func (s *Store) UpsertNamespace(ns *model.Namespace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.meta.namespaces[ns.Key()]
	if prev.Equals(ns) {
		return
	}
	if s.meta.namespaces == nil {
		s.meta.namespaces = map[model.NamespaceKey]*model.Namespace{}
	}
	s.meta.namespaces[ns.Key()] = ns
	s.notifier.Notify(registry.NamespaceEvent{Type: upsertType(prev != nil), Previous: prev, Current: ns})
}

// DeleteNamespace removes a namespace.
func (s *Store) DeleteNamespace(key model.NamespaceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.meta.namespaces[key]; prev != nil {
		delete(s.meta.namespaces, key)
		s.notifier.Notify(registry.NamespaceEvent{Type: model.EventDelete, Previous: prev})
	}
}

// UpsertGateway adds or replaces a Gateway; it publishes nothing when an
// equal one is there.
func (s *Store) UpsertGateway(gw *model.Gateway) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.meta.gateways[gw.Key()]
	if prev.Equals(gw) {
		return
	}
	if s.meta.gateways == nil {
		s.meta.gateways = map[model.GatewayKey]*model.Gateway{}
	}
	s.meta.gateways[gw.Key()] = gw
	s.notifier.Notify(registry.GatewayEvent{Type: upsertType(prev != nil), Previous: prev, Current: gw})
}

// DeleteGateway removes a Gateway.
func (s *Store) DeleteGateway(key model.GatewayKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.meta.gateways[key]; prev != nil {
		delete(s.meta.gateways, key)
		s.notifier.Notify(registry.GatewayEvent{Type: model.EventDelete, Previous: prev})
	}
}

// DeleteMetadata removes the cluster data, namespaces and Gateways of a
// cluster, in that order, each kind by key.
func (s *Store) DeleteMetadata(cluster model.ClusterID) {
	s.DeleteCluster(cluster)
	for _, ns := range s.Namespaces() {
		if ns.Cluster == cluster {
			s.DeleteNamespace(ns.Key())
		}
	}
	for _, gw := range s.Gateways() {
		if gw.Cluster == cluster {
			s.DeleteGateway(gw.Key())
		}
	}
}

func upsertType(update bool) model.EventType {
	if update {
		return model.EventUpdate
	}
	return model.EventAdd
}

// Clusters returns every cluster's data, sorted by ID.
func (s *Store) Clusters() []model.Cluster {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedClusters()
}

// Namespaces returns every namespace, sorted by cluster, then name.
func (s *Store) Namespaces() []*model.Namespace {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedNamespaces()
}

// Gateways returns every Gateway, sorted by cluster, namespace, then
// name.
func (s *Store) Gateways() []*model.Gateway {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedGateways()
}

// The sorted lists; the caller holds s.mu.

func (s *Store) sortedClusters() []model.Cluster {
	out := make([]model.Cluster, 0, len(s.meta.clusters))
	for _, id := range slices.Sorted(maps.Keys(s.meta.clusters)) {
		out = append(out, *s.meta.clusters[id])
	}
	return out
}

func (s *Store) sortedNamespaces() []*model.Namespace {
	out := slices.Collect(maps.Values(s.meta.namespaces))
	slices.SortFunc(out, func(a, b *model.Namespace) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func (s *Store) sortedGateways() []*model.Gateway {
	out := slices.Collect(maps.Values(s.meta.gateways))
	slices.SortFunc(out, func(a, b *model.Gateway) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// initialMetadata returns the events that replay the metadata to a new
// subscriber. The caller holds s.mu.
func (s *Store) initialMetadata() []registry.Event {
	var out []registry.Event
	for _, id := range slices.Sorted(maps.Keys(s.meta.clusters)) {
		out = append(out, registry.ClusterEvent{Type: model.EventAdd, Current: s.meta.clusters[id], Initial: true})
	}
	for _, ns := range s.sortedNamespaces() {
		out = append(out, registry.NamespaceEvent{Type: model.EventAdd, Current: ns, Initial: true})
	}
	for _, gw := range s.sortedGateways() {
		out = append(out, registry.GatewayEvent{Type: model.EventAdd, Current: gw, Initial: true})
	}
	return out
}
