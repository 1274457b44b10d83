package store

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Store is the state of one registry, one shard. The registry writes it
// only services of the shard's provider, whose endpoints are the shard's:
// the store publishes every list under the shard's key. It is safe for
// concurrent use.
type Store struct {
	shard    model.ShardKey
	notifier registry.Notifier

	// mu guards the fields below. Writers hold it exclusively, and call
	// the notifier while holding it so that subscriptions see changes in
	// order; queries hold it shared.
	mu       sync.RWMutex
	services index.Services
	// endpoints by service key, including those of services not (yet)
	// present: they are kept, but neither indexed nor published, until
	// the service arrives, so the state never depends on which came
	// first.
	endpoints map[model.ServiceKey]*endpointSet
	// byIP indexes the endpoints of present services.
	byIP      index.EndpointsByIP
	workloads index.Workloads
	diags     index.Diagnostics
	// gateways is the sorted list of network gateways; nil when none.
	gateways []model.NetworkGateway
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
	// eps is the sorted list; never empty.
	eps []*model.Endpoint
}

// New returns an empty store for a shard.
func New(shard model.ShardKey) *Store {
	return &Store{shard: shard, endpoints: map[model.ServiceKey]*endpointSet{}}
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

// MarkSynced records that the initial state is complete. HasSynced turns
// true once every event published so far has reached the handlers.
func (s *Store) MarkSynced() {
	s.syncMark.Store(s.notifier.Mark())
	s.synced.Store(true)
}

// Idle reports whether every event published so far has reached every
// subscriber's handler.
func (s *Store) Idle() bool {
	return s.notifier.Delivered(s.notifier.Mark())
}

// UpsertService adds or replaces the service with svc's key. It publishes
// nothing when an equal service is already there. Adding a service
// releases the endpoints stored for it earlier, after the service's
// event.
func (s *Store) UpsertService(svc *model.Service) {
	key := svc.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services.Get(key)
	if prev.Equals(svc) {
		return
	}
	s.services.Put(svc)
	set := s.endpoints[key]
	if set != nil {
		// Indexed endpoints reach the service through the owner, so
		// they need no update when the service changes.
		set.owner.Service = svc
	}
	if prev != nil {
		s.notifier.Notify(registry.ServiceEvent{Type: model.EventUpdate, Previous: prev, Current: svc})
		return
	}
	s.notifier.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: svc})
	if set != nil {
		s.byIP.Add(&set.owner, set.eps)
		s.notifier.Notify(registry.EndpointsEvent{Shard: s.shard, Service: key, Endpoints: set.eps})
	}
}

// DeleteService removes a service. Its endpoints are withdrawn from
// subscribers (an empty endpoints event) before the delete, but kept, to
// be released again if the service comes back.
func (s *Store) DeleteService(key model.ServiceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services.Delete(key)
	if prev == nil {
		return
	}
	if set := s.endpoints[key]; set != nil {
		s.byIP.Remove(&set.owner, set.eps)
		set.owner.Service = nil
		s.notifier.Notify(registry.EndpointsEvent{Shard: s.shard, Service: key})
	}
	s.notifier.Notify(registry.ServiceEvent{Type: model.EventDelete, Previous: prev})
}

// SetEndpoints replaces the endpoints of a service. The store keeps eps,
// sorted: a list already in order (as registries publish their lists) is
// kept as it is and never written to; any other is sorted in place (see
// index.SortEndpoints). It publishes nothing when the list is equal to
// the one stored, or while the service is absent.
func (s *Store) SetEndpoints(key model.ServiceKey, eps []*model.Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.endpoints[key]
	var prev []*model.Endpoint
	if set != nil {
		prev = set.eps
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
		delete(s.endpoints, key)
	}
	set.eps = eps
	if set.owner.Service != nil {
		s.byIP.Replace(&set.owner, prev, eps)
		s.notifier.Notify(registry.EndpointsEvent{Shard: s.shard, Service: key, Endpoints: eps})
	}
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
