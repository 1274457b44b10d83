package store

import (
	"cmp"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Store is the state of one shard. It is safe for concurrent use.
type Store struct {
	shard    model.ShardKey
	notifier registry.Notifier

	// mu guards the maps below. Writers hold it exclusively, and call the
	// notifier while holding it so that subscriptions see changes in
	// order; queries hold it shared.
	mu sync.RWMutex
	// services by key, and by hostname in precedence order.
	services map[model.ServiceKey]*model.Service
	byHost   map[model.Hostname][]*model.Service
	// endpoints by service key, sorted, including those of services not
	// (yet) present: they are kept, but neither indexed nor published,
	// until the service arrives, so the state never depends on which
	// came first.
	endpoints map[model.ServiceKey][]*model.Endpoint
	// byIP indexes the endpoints of present services by each address.
	byIP map[netip.Addr][]ipRef
	// workloads by key and by address.
	workloads     map[model.WorkloadKey]*model.WorkloadInstance
	workloadsByIP map[netip.Addr][]*model.WorkloadInstance
	// diags by owner (an opaque key of the writer's choosing).
	diags map[string][]model.Diagnostic

	// Sorted read views, built on first use after a change and dropped
	// by the next change (under mu). Stored while mu is held shared, so
	// a writer's reset always follows.
	servicesView  atomic.Pointer[[]*model.Service]
	workloadsView atomic.Pointer[[]*model.WorkloadInstance]
	diagsView     atomic.Pointer[[]model.Diagnostic]

	// synced is set by MarkSynced; syncMark is the notifier's position
	// then.
	synced   atomic.Bool
	syncMark atomic.Uint64
}

type ipRef struct {
	key model.ServiceKey
	ep  *model.Endpoint
}

// New returns an empty store for a shard.
func New(shard model.ShardKey) *Store {
	return &Store{
		shard:         shard,
		services:      map[model.ServiceKey]*model.Service{},
		byHost:        map[model.Hostname][]*model.Service{},
		endpoints:     map[model.ServiceKey][]*model.Endpoint{},
		byIP:          map[netip.Addr][]ipRef{},
		workloads:     map[model.WorkloadKey]*model.WorkloadInstance{},
		workloadsByIP: map[netip.Addr][]*model.WorkloadInstance{},
		diags:         map[string][]model.Diagnostic{},
	}
}

// Shard returns the store's shard.
func (s *Store) Shard() model.ShardKey { return s.shard }

// Reader returns the read side of the store, for a registry to embed.
func (s *Store) Reader() *Reader { return &Reader{s: s} }

// MarkSynced records that the initial state is complete. HasSynced turns
// true once every event published so far has reached the handlers.
func (s *Store) MarkSynced() {
	s.syncMark.Store(s.notifier.Mark())
	s.synced.Store(true)
}

// UpsertService adds or replaces the service with svc's key. It publishes
// nothing when an equal service is already there. Adding a service
// releases endpoints stored for it earlier.
func (s *Store) UpsertService(svc *model.Service) {
	key := svc.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services[key]
	if prev.Equals(svc) {
		return
	}
	s.services[key] = svc
	s.setByHost(key.Hostname, prev, svc)
	s.servicesView.Store(nil)
	if prev == nil {
		s.notifier.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: svc})
		if eps := s.endpoints[key]; len(eps) > 0 {
			s.index(key, eps)
			s.notifier.Notify(registry.EndpointsEvent{Shard: s.shard, Service: key, Endpoints: eps})
		}
		return
	}
	// Indexed endpoints point at the service by key, so they need no
	// update when the service changes.
	s.notifier.Notify(registry.ServiceEvent{Type: model.EventUpdate, Previous: prev, Current: svc})
}

// DeleteService removes a service. Its endpoints are withdrawn from
// subscribers (an empty endpoints event) before the delete, but kept, to be
// released again if the service comes back.
func (s *Store) DeleteService(key model.ServiceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services[key]
	if prev == nil {
		return
	}
	if eps := s.endpoints[key]; len(eps) > 0 {
		s.unindex(key, eps)
		s.notifier.Notify(registry.EndpointsEvent{Shard: s.shard, Service: key})
	}
	delete(s.services, key)
	s.setByHost(key.Hostname, prev, nil)
	s.servicesView.Store(nil)
	s.notifier.Notify(registry.ServiceEvent{Type: model.EventDelete, Previous: prev})
}

// SetEndpoints replaces the endpoints of a service. The store sorts eps in
// place and keeps it. It publishes nothing when the list is equal to the
// one stored, or while the service is absent.
func (s *Store) SetEndpoints(key model.ServiceKey, eps []*model.Endpoint) {
	slices.SortFunc(eps, model.CompareEndpoints)
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.endpoints[key]
	if model.EndpointsEqual(prev, eps) {
		return
	}
	if len(eps) == 0 {
		delete(s.endpoints, key)
		eps = nil
	} else {
		s.endpoints[key] = eps
	}
	if s.services[key] == nil {
		return
	}
	s.unindex(key, prev)
	s.index(key, eps)
	s.notifier.Notify(registry.EndpointsEvent{Shard: s.shard, Service: key, Endpoints: eps})
}

// UpsertWorkload adds or replaces a workload instance; nothing is published
// when an equal one is already there.
func (s *Store) UpsertWorkload(w *model.WorkloadInstance) {
	key := w.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.workloads[key]
	if prev.Equals(w) {
		return
	}
	s.workloads[key] = w
	if prev != nil {
		s.unindexWorkload(prev)
	}
	for _, ip := range w.Endpoint.Addresses {
		s.workloadsByIP[ip] = insertSorted(s.workloadsByIP[ip], w)
	}
	s.workloadsView.Store(nil)
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
	prev := s.workloads[key]
	if prev == nil {
		return
	}
	delete(s.workloads, key)
	s.unindexWorkload(prev)
	s.workloadsView.Store(nil)
	s.notifier.Notify(registry.WorkloadEvent{Type: model.EventDelete, Previous: prev})
}

// SetDiagnostics replaces the diagnostics of one owner, a key of the
// writer's choosing (typically "Kind/namespace/name"). An empty list
// removes them.
func (s *Store) SetDiagnostics(owner string, ds []model.Diagnostic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, had := s.diags[owner]
	if len(ds) == 0 {
		if !had {
			return
		}
		delete(s.diags, owner)
	} else {
		if slices.Equal(prev, ds) {
			return
		}
		s.diags[owner] = slices.Clone(ds)
	}
	s.diagsView.Store(nil)
}

// setByHost replaces prev with cur (either may be nil) in the hostname
// index, keeping precedence order.
func (s *Store) setByHost(host model.Hostname, prev, cur *model.Service) {
	list := s.byHost[host]
	if prev != nil {
		list = slices.DeleteFunc(slices.Clone(list), func(x *model.Service) bool { return x == prev })
	}
	if cur != nil {
		list = append(list, cur)
		slices.SortFunc(list, ComparePrecedence)
	}
	if len(list) == 0 {
		delete(s.byHost, host)
	} else {
		s.byHost[host] = list
	}
}

// ComparePrecedence orders services that share a hostname: Kubernetes
// Services first, then the oldest, then by namespace and name.
func ComparePrecedence(a, b *model.Service) int {
	if a.Provider != b.Provider {
		if a.Provider == model.Kubernetes {
			return -1
		}
		if b.Provider == model.Kubernetes {
			return 1
		}
	}
	if c := a.CreationTime.Compare(b.CreationTime); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

func (s *Store) index(key model.ServiceKey, eps []*model.Endpoint) {
	for _, ep := range eps {
		for _, ip := range ep.Addresses {
			s.byIP[ip] = append(s.byIP[ip], ipRef{key: key, ep: ep})
		}
	}
}

func (s *Store) unindex(key model.ServiceKey, eps []*model.Endpoint) {
	for _, ep := range eps {
		for _, ip := range ep.Addresses {
			refs := slices.DeleteFunc(s.byIP[ip], func(r ipRef) bool { return r.ep == ep })
			if len(refs) == 0 {
				delete(s.byIP, ip)
			} else {
				s.byIP[ip] = refs
			}
		}
	}
}

func (s *Store) unindexWorkload(w *model.WorkloadInstance) {
	for _, ip := range w.Endpoint.Addresses {
		list := slices.DeleteFunc(slices.Clone(s.workloadsByIP[ip]), func(x *model.WorkloadInstance) bool { return x == w })
		if len(list) == 0 {
			delete(s.workloadsByIP, ip)
		} else {
			s.workloadsByIP[ip] = list
		}
	}
}

// insertSorted returns a new slice with w inserted in workload order; the
// old slice may be held by a caller and is not modified.
func insertSorted(list []*model.WorkloadInstance, w *model.WorkloadInstance) []*model.WorkloadInstance {
	i, _ := slices.BinarySearchFunc(list, w, compareWorkloads)
	out := make([]*model.WorkloadInstance, 0, len(list)+1)
	out = append(out, list[:i]...)
	out = append(out, w)
	return append(out, list[i:]...)
}

func compareWorkloads(a, b *model.WorkloadInstance) int {
	ka, kb := a.Key(), b.Key()
	if c := cmp.Compare(ka.Cluster, kb.Cluster); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.Kind, kb.Kind); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.Namespace, kb.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(ka.Name, kb.Name)
}
