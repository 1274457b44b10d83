package aggregate

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// mergedStore is the merged state of many shards: the merged services,
// each shard's endpoints of them, the workloads of every registry and the
// merge's diagnostics, with the indexes queries need and the notifier
// that publishes every change. A merger writes it; queries and
// subscriptions read it. It is safe for concurrent use.
//
// A shard's endpoints belong to a service only while the service comes
// from the shard's provider (visible): a ServiceEntry that loses its key
// to a Kubernetes Service contributes no endpoints to it (ARCHITECTURE.md
// decisions 1 and 8).
type mergedStore struct {
	notifier registry.Notifier

	// mu guards the fields below. Writers hold it exclusively, and call
	// the notifier while holding it so that subscriptions see changes in
	// order; queries hold it shared.
	mu       sync.RWMutex
	services index.Services
	// endpoints by service key and shard, including those of services
	// not (yet) present and of shards not visible: they are kept, but
	// neither indexed nor published, until the service arrives from the
	// shard's provider, so the state never depends on which came first.
	endpoints map[model.ServiceKey]*mergedSet
	// byIP indexes the visible endpoints of present services.
	byIP      index.EndpointsByIP
	workloads index.Workloads
	diags     index.Diagnostics
	// gateways is the sorted list of network gateways; nil when none.
	gateways []model.NetworkGateway

	// synced is set by markSynced; syncMark is the notifier's position
	// then.
	synced   atomic.Bool
	syncMark atomic.Uint64
}

// mergedSet is the endpoints of one service.
type mergedSet struct {
	// owner is the service's key, and the service while it is present:
	// the IP index reaches both through it.
	owner index.Owner
	// byShard holds each shard's sorted list.
	byShard shards.Map[[]*model.Endpoint]
	// merged is the sorted union of the visible shards' lists; when one
	// shard is visible it is that shard's list itself.
	merged []*model.Endpoint
}

// visible reports whether a shard's endpoints belong to svc: the service
// must be present and come from the shard's provider.
func visible(svc *model.Service, shard model.ShardKey) bool {
	return svc != nil && svc.Provider == shard.Provider
}

func newMergedStore() *mergedStore {
	return &mergedStore{endpoints: map[model.ServiceKey]*mergedSet{}}
}

// markSynced records that the initial state is complete: HasSynced turns
// true once every event published so far has reached the handlers.
func (s *mergedStore) markSynced() {
	s.syncMark.Store(s.notifier.Mark())
	s.synced.Store(true)
}

// upsertService adds or replaces the service with svc's key. It publishes
// nothing when an equal service is already there. Shards hidden by the
// change (a change of provider) are withdrawn before the service's
// event, shards revealed by it (the service's arrival, or a change of
// provider) released after, so that a subscriber never holds endpoints
// of a service it does not know.
func (s *mergedStore) upsertService(svc *model.Service) {
	key := svc.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services.Get(key)
	if prev.Equals(svc) {
		return
	}
	set := s.endpoints[key]
	s.withdraw(set, prev, svc)
	s.services.Put(svc)
	if set != nil {
		// Indexed endpoints reach the service through the owner, so
		// they need no update when the service changes.
		set.owner.Service = svc
	}
	if prev == nil {
		s.notifier.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: svc})
	} else {
		s.notifier.Notify(registry.ServiceEvent{Type: model.EventUpdate, Previous: prev, Current: svc})
	}
	s.release(set, prev, svc)
}

// deleteService removes a service. Its endpoints are withdrawn from
// subscribers (an empty endpoints event per shard) before the delete, but
// kept, to be released again if the service comes back.
func (s *mergedStore) deleteService(key model.ServiceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services.Get(key)
	if prev == nil {
		return
	}
	set := s.endpoints[key]
	s.withdraw(set, prev, nil)
	s.services.Delete(key)
	if set != nil {
		set.owner.Service = nil
	}
	s.notifier.Notify(registry.ServiceEvent{Type: model.EventDelete, Previous: prev})
}

// withdraw publishes an empty list for each shard of set visible under
// prev but not under cur, and unindexes its endpoints.
func (s *mergedStore) withdraw(set *mergedSet, prev, cur *model.Service) {
	if set == nil {
		return
	}
	changed := false
	for shard, eps := range set.byShard.All() {
		if visible(prev, shard) && !visible(cur, shard) {
			s.byIP.Remove(&set.owner, eps)
			s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: set.owner.Key})
			changed = true
		}
	}
	if changed {
		set.merged = merge(set, cur)
	}
}

// release publishes the list of each shard of set visible under cur but
// not under prev, and indexes its endpoints.
func (s *mergedStore) release(set *mergedSet, prev, cur *model.Service) {
	if set == nil {
		return
	}
	changed := false
	for shard, eps := range set.byShard.All() {
		if !visible(prev, shard) && visible(cur, shard) {
			s.byIP.Add(&set.owner, eps)
			s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: set.owner.Key, Endpoints: eps})
			changed = true
		}
	}
	if changed {
		set.merged = merge(set, cur)
	}
}

// setEndpoints replaces one shard's endpoints of a service. The store
// keeps eps, sorted: a list already in order (as every registry publishes
// its lists) is kept as it is and never written to, so a registry's
// published list can be passed on without a copy; any other is sorted in
// place (see index.SortEndpoints). It publishes nothing when the list is
// equal to the one stored, or while the shard is not visible.
func (s *mergedStore) setEndpoints(shard model.ShardKey, key model.ServiceKey, eps []*model.Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.endpoints[key]
	var prev []*model.Endpoint
	if set != nil {
		prev, _ = set.byShard.Get(shard)
	}
	index.SortEndpoints(prev, eps)
	if model.EndpointsEqual(prev, eps) {
		return
	}
	if set == nil {
		set = &mergedSet{owner: index.Owner{Key: key, Service: s.services.Get(key)}}
		s.endpoints[key] = set
	}
	if len(eps) == 0 {
		eps = nil
		set.byShard.Delete(shard)
	} else {
		set.byShard.Set(shard, eps)
	}
	if svc := set.owner.Service; visible(svc, shard) {
		s.byIP.Replace(&set.owner, prev, eps)
		set.merged = merge(set, svc)
		s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: key, Endpoints: eps})
	}
	if set.byShard.Len() == 0 {
		delete(s.endpoints, key)
	}
}

// merge returns the sorted union of the shards of set visible for svc.
func merge(set *mergedSet, svc *model.Service) []*model.Endpoint {
	var out []*model.Endpoint
	n := 0
	for shard, eps := range set.byShard.All() {
		if visible(svc, shard) {
			n++
			out = eps
		}
	}
	if n <= 1 {
		return out
	}
	out = nil
	for shard, eps := range set.byShard.All() {
		if visible(svc, shard) {
			out = append(out, eps...)
		}
	}
	slices.SortFunc(out, model.CompareEndpoints)
	return out
}

// upsertWorkload adds or replaces a workload instance; nothing is
// published when an equal one is already there.
func (s *mergedStore) upsertWorkload(w *model.WorkloadInstance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.workloads.Get(w.Key())
	if prev.Equals(w) {
		return
	}
	s.workloads.Put(w)
	if prev == nil {
		s.notifier.Notify(registry.WorkloadEvent{Type: model.EventAdd, Current: w})
	} else {
		s.notifier.Notify(registry.WorkloadEvent{Type: model.EventUpdate, Previous: prev, Current: w})
	}
}

// deleteWorkload removes a workload instance.
func (s *mergedStore) deleteWorkload(key model.WorkloadKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.workloads.Delete(key); prev != nil {
		s.notifier.Notify(registry.WorkloadEvent{Type: model.EventDelete, Previous: prev})
	}
}

// setGateways replaces the network gateways with gws, sorted and without
// duplicates, and publishes them when they changed.
func (s *mergedStore) setGateways(gws []model.NetworkGateway) {
	if len(gws) == 0 {
		gws = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Equal(s.gateways, gws) {
		return
	}
	s.gateways = gws
	s.notifier.Notify(registry.NetworkGatewaysEvent{Gateways: gws})
}

// setDiagnostics replaces the diagnostics of one owner (a key of the
// merger's choosing); an empty list removes them.
func (s *mergedStore) setDiagnostics(owner string, ds []model.Diagnostic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.diags.Set(owner, ds)
}

// observe makes o the observer of the store's notifier (for metrics).
func (s *mergedStore) observe(o registry.NotifierObserver) { s.notifier.Observe(o) }

// queueDepths returns each subscriber's queue depth.
func (s *mergedStore) queueDepths() map[uint64]int { return s.notifier.QueueDepths() }
