package store

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Store is a registry's state: services, each shard's endpoints of them,
// workloads, diagnostics and network gateways, with the indexes queries
// need and the notifier that publishes every change. A registry's store
// holds one shard; the aggregate's holds every registry's. It is safe for
// concurrent use.
//
// A shard's endpoints belong to a service only while the service comes
// from the shard's provider (they are visible): a ServiceEntry that loses
// its key to a Kubernetes Service contributes no endpoints to it
// (ARCHITECTURE.md decisions 1 and 8). In a registry's own store every
// service has the shard's provider, so every list is visible.
type Store struct {
	notifier registry.Notifier

	// mu guards the fields below. Writers hold it exclusively, and call
	// the notifier while holding it so that subscriptions see changes in
	// order; queries hold it shared.
	mu       sync.RWMutex
	services index.Services
	// endpoints by service key, including those of services not (yet)
	// present and of shards not visible: they are kept, but neither
	// indexed nor published, until the service arrives from the shard's
	// provider, so the state never depends on which came first.
	endpoints map[model.ServiceKey]*endpointSet
	// byIP indexes the visible endpoints of present services.
	byIP      index.EndpointsByIP
	workloads index.Workloads
	diags     index.Diagnostics
	// gateways is the sorted list of network gateways; nil when none.
	gateways []model.NetworkGateway
	meta     metadata
	// sized is set by Reserve: the first estimate stands.
	sized bool

	// synced is set by MarkSynced; syncMark is the notifier's position
	// then.
	synced   atomic.Bool
	syncMark atomic.Uint64
}

// endpointSet is the endpoints of one service.
type endpointSet struct {
	// owner is the service's key, and the service while it is present:
	// the IP index reaches both through it.
	owner index.Owner
	// byShard holds each shard's sorted list; never an empty one.
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

// New returns an empty store.
func New() *Store {
	return &Store{endpoints: map[model.ServiceKey]*endpointSet{}}
}

// Reserve makes an empty store ready for about the given numbers of
// services and of workloads (and of addresses: one per workload), so
// that a registry's initial state does not grow its maps step by step.
// It does nothing to a store that holds anything or was sized before:
// the first estimate stands, and the maps grow past it as needed.
func (s *Store) Reserve(services, workloads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sized || s.services.Len() > 0 || len(s.endpoints) > 0 || s.workloads.Len() > 0 {
		return
	}
	s.sized = true
	s.services.Reserve(services)
	s.endpoints = make(map[model.ServiceKey]*endpointSet, services)
	s.workloads.Reserve(workloads)
	s.byIP.Reserve(workloads)
}

// MarkSynced records that the initial state is complete and publishes
// the SyncedEvent; HasSynced turns true once it has reached the
// handlers. Calls after the first do nothing.
func (s *Store) MarkSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.synced.Load() {
		return
	}
	s.notifier.Notify(registry.SyncedEvent{})
	s.syncMark.Store(s.notifier.Mark())
	s.synced.Store(true)
}

// Idle reports whether every event published so far has reached every
// subscriber's handler.
func (s *Store) Idle() bool {
	return s.notifier.Delivered(s.notifier.Mark())
}

// UpsertService adds or replaces the service with svc's key. It publishes
// nothing when an equal service is already there. Shards hidden by the
// change (a change of provider) are withdrawn before the service's event,
// shards revealed by it (the service's arrival, or a change of provider)
// released after, so that a subscriber never holds endpoints of a
// service it does not know.
func (s *Store) UpsertService(svc *model.Service) {
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

// DeleteService removes a service. Its endpoints are withdrawn from
// subscribers (an empty endpoints event per visible shard) before the
// delete, but kept, to be released again if the service comes back.
func (s *Store) DeleteService(key model.ServiceKey) {
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
func (s *Store) withdraw(set *endpointSet, prev, cur *model.Service) {
	if set == nil {
		return
	}
	var withdrawn []model.ShardKey
	for shard, eps := range set.byShard.All() {
		if visible(prev, shard) && !visible(cur, shard) {
			s.byIP.Remove(&set.owner, eps)
			withdrawn = append(withdrawn, shard)
		}
	}
	if len(withdrawn) == 0 {
		return
	}
	set.merged = set.union(cur)
	for _, shard := range withdrawn {
		s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: set.owner.Key, All: set.merged})
	}
}

// release publishes the list of each shard of set visible under cur but
// not under prev, and indexes its endpoints.
func (s *Store) release(set *endpointSet, prev, cur *model.Service) {
	if set == nil {
		return
	}
	type released struct {
		shard model.ShardKey
		eps   []*model.Endpoint
	}
	var rel []released
	for shard, eps := range set.byShard.All() {
		if !visible(prev, shard) && visible(cur, shard) {
			s.byIP.Add(&set.owner, eps)
			rel = append(rel, released{shard, eps})
		}
	}
	if len(rel) == 0 {
		return
	}
	set.merged = set.union(cur)
	for _, r := range rel {
		s.notifier.Notify(registry.EndpointsEvent{Shard: r.shard, Service: set.owner.Key, Endpoints: r.eps, All: set.merged})
	}
}

// SetEndpoints replaces one shard's endpoints of a service. The store
// keeps eps, sorted: a list already in order (as registries publish
// their lists) is kept as it is and never written to, so a registry's
// published list can be passed on without a copy; any other is sorted in
// place (see index.SortEndpoints). It publishes nothing when the list is
// equal to the one stored, or while the shard is not visible.
func (s *Store) SetEndpoints(shard model.ShardKey, key model.ServiceKey, eps []*model.Endpoint) {
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
		set = &endpointSet{owner: index.Owner{Key: key, Service: s.services.Get(key)}}
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
		set.merged = set.union(svc)
		s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: key, Endpoints: eps, All: set.merged})
	}
	if set.byShard.Len() == 0 {
		delete(s.endpoints, key)
	}
}

// union returns the sorted union of the lists of the shards visible for
// svc, merged from the sorted lists; with one such shard, its list
// itself.
func (set *endpointSet) union(svc *model.Service) []*model.Endpoint {
	var lists [][]*model.Endpoint
	for shard, eps := range set.byShard.All() {
		if visible(svc, shard) {
			lists = append(lists, eps)
		}
	}
	return index.MergeEndpoints(lists)
}

// UpsertWorkload adds or replaces a workload instance; nothing is published
// when an equal one is already there.
func (s *Store) UpsertWorkload(w *model.WorkloadInstance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upsertWorkloadLocked(w)
}

// upsertBatch is how many workloads UpsertWorkloads writes per hold of
// the lock: queries wait for one batch at most, not for the whole list.
const upsertBatch = 512

// UpsertWorkloads is UpsertWorkload of each workload in turn, taking the
// lock once per batch of them: a registry's initial state, published at
// once.
func (s *Store) UpsertWorkloads(ws []*model.WorkloadInstance) {
	for batch := range slices.Chunk(ws, upsertBatch) {
		s.mu.Lock()
		for _, w := range batch {
			s.upsertWorkloadLocked(w)
		}
		s.mu.Unlock()
	}
}

// upsertWorkloadLocked is UpsertWorkload; s.mu must be held.
func (s *Store) upsertWorkloadLocked(w *model.WorkloadInstance) {
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

// DeleteWorkload removes a workload instance.
func (s *Store) DeleteWorkload(key model.WorkloadKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.workloads.Delete(key); prev != nil {
		s.notifier.Notify(registry.WorkloadEvent{Type: model.EventDelete, Previous: prev})
	}
}

// SetDiagnostics replaces the diagnostics of one owner, a key of the
// writer's choosing (typically "Kind/namespace/name"). An empty list
// removes them. The store keeps a copy.
func (s *Store) SetDiagnostics(owner string, ds []model.Diagnostic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.diags.Set(owner, ds)
}

// SetNetworkGateways replaces the network gateways with gws, which must be
// sorted and without duplicates (model.SortGateways), and publishes them
// when they changed.
func (s *Store) SetNetworkGateways(gws []model.NetworkGateway) {
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

// Observe makes o the observer of the store's notifier (for metrics).
// Call it before the store is used.
func (s *Store) Observe(o registry.NotifierObserver) { s.notifier.Observe(o) }

// QueueDepths returns each subscriber's queue depth (see
// registry.Notifier.QueueDepths).
func (s *Store) QueueDepths() map[uint64]int { return s.notifier.QueueDepths() }
