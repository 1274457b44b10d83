package store

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A *Store's read side is a registry.Reader: a registry may embed one to
// answer queries, subscriptions and HasSynced from its store without
// exposing the store's writes.
var (
	_ registry.Reader            = (*Store)(nil)
	_ registry.MetadataDiscovery = (*Store)(nil)
)

// Services returns every service sorted by hostname and namespace. The
// slice is cached until the next change.
func (s *Store) Services() []*model.Service {
	if v := s.services.Cached(); v != nil {
		return v
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.services.Sorted()
}

// GetService returns the service with the hostname that wins precedence
// (model.ComparePrecedence), or nil.
func (s *Store) GetService(hostname model.Hostname) *model.Service {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.services.Winner(hostname)
}

// ServiceByKey returns the service with the key, or nil.
func (s *Store) ServiceByKey(key model.ServiceKey) *model.Service {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.services.Get(key)
}

// Endpoints returns the endpoints of a present service from its visible
// shards, sorted. Without a filter the stored slice itself is returned.
func (s *Store) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	set := s.endpoints[key]
	if set == nil || set.owner.Service == nil {
		return nil
	}
	if q == (registry.EndpointQuery{}) {
		return set.merged
	}
	var out []*model.Endpoint
	for _, ep := range set.merged {
		if q.Matches(ep) {
			out = append(out, ep)
		}
	}
	return out
}

// Workloads returns every workload, sorted. The slice is cached until the
// next change.
func (s *Store) Workloads() []*model.WorkloadInstance {
	if v := s.workloads.Cached(); v != nil {
		return v
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.workloads.Sorted()
}

// WorkloadsByIP returns the workloads with the address.
func (s *Store) WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.workloads.ByIP(ip)
}

// ProxyTargets returns the service ports served by visible endpoints
// with one of the query's IPs, narrowed as it says.
func (s *Store) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byIP.ProxyTargets(q)
}

// Diagnostics returns every diagnostic, sorted. The slice is cached until
// the next change.
func (s *Store) Diagnostics() []model.Diagnostic {
	if v := s.diags.Cached(); v != nil {
		return v
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.diags.Sorted()
}

// NetworkGateways returns the network gateways, sorted.
func (s *Store) NetworkGateways() []model.NetworkGateway {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gateways
}

// Subscribe registers h; it first receives the current state: every
// service, sorted, then each one's visible shards' lists, then every
// workload, sorted, then the network gateways, then the clusters,
// namespaces and Gateways, then, once the store is synced, the
// SyncedEvent.
func (s *Store) Subscribe(h registry.Handler) (unsubscribe func()) {
	// Exclusive, so that no write slips between the snapshot and the
	// registration.
	s.mu.Lock()
	defer s.mu.Unlock()
	svcs := s.services.Sorted()
	ws := s.workloads.Sorted()
	initial := make([]registry.Event, 0, 2*len(svcs)+len(ws))
	for _, svc := range svcs {
		initial = append(initial, registry.ServiceEvent{Type: model.EventAdd, Current: svc, Initial: true})
	}
	for _, svc := range svcs {
		set := s.endpoints[svc.Key()]
		if set == nil {
			continue
		}
		for shard, eps := range set.byShard.All() {
			if visible(svc, shard) {
				initial = append(initial, registry.EndpointsEvent{Shard: shard, Service: set.owner.Key, Endpoints: eps, All: set.merged, Initial: true})
			}
		}
	}
	for _, w := range ws {
		initial = append(initial, registry.WorkloadEvent{Type: model.EventAdd, Current: w, Initial: true})
	}
	if len(s.gateways) > 0 {
		initial = append(initial, registry.NetworkGatewaysEvent{Gateways: s.gateways, Initial: true})
	}
	initial = append(initial, s.initialMetadata()...)
	if s.synced.Load() {
		initial = append(initial, registry.SyncedEvent{Initial: true})
	}
	return s.notifier.Subscribe(h, initial)
}

// HasSynced reports whether MarkSynced was called and every event published
// until then has reached the handlers.
func (s *Store) HasSynced() bool {
	return s.synced.Load() && s.notifier.Delivered(s.syncMark.Load())
}
