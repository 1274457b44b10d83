package store

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/ipmap"
	"github.com/meshreg/meshreg/internal/shards"
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
	byHost   map[model.Hostname]hostServices
	// endpoints by service key and shard, including those of services
	// not (yet) present: they are kept, but neither indexed nor
	// published, until the service arrives, so the state never depends
	// on which came first. See visible.
	endpoints map[model.ServiceKey]*endpointSet
	// byIP indexes the endpoints of present services by each address.
	byIP ipmap.Map[[]ipRef]
	// workloads by key and by address.
	workloads     map[model.WorkloadKey]*model.WorkloadInstance
	workloadsByIP ipmap.Map[[]*model.WorkloadInstance]
	// diags by owner (an opaque key of the writer's choosing).
	diags map[string][]model.Diagnostic

	// Sorted read views, built on first use after a change and dropped
	// by the next change (under mu). Stored while mu is held shared, so
	// a writer's reset always follows.
	servicesView  atomic.Pointer[[]*model.Service]
	workloadsView atomic.Pointer[[]*model.WorkloadInstance]
	diagsView     atomic.Pointer[[]model.Diagnostic]

	// sized is set by Reserve (under mu): the first estimate stands.
	sized bool

	// synced is set by MarkSynced; syncMark is the notifier's position
	// then.
	synced   atomic.Bool
	syncMark atomic.Uint64
}

// endpointSet is the endpoints of one service.
type endpointSet struct {
	// key is the service's key, and svc the service while it is present
	// (s.services[key]): the IP index reaches both through the set.
	key model.ServiceKey
	svc *model.Service
	// byShard holds each shard's sorted list.
	byShard shards.Map[[]*model.Endpoint]
	// merged is the sorted union of the visible shards' lists; when one
	// shard is visible it is that shard's list itself.
	merged []*model.Endpoint
}

// visible reports whether a shard's endpoints belong to svc: the service
// must be present and come from the shard's provider. So a ServiceEntry
// that loses its hostname to a Kubernetes Service contributes no
// endpoints to it.
func visible(svc *model.Service, shard model.ShardKey) bool {
	return svc != nil && svc.Provider == shard.Provider
}

// ipRef is an entry of the IP index: an endpoint and the set (so the
// service) it belongs to. Pointing to the set instead of holding the
// 32-byte key keeps an entry at 16 bytes.
type ipRef struct {
	set *endpointSet
	ep  *model.Endpoint
}

// New returns an empty store for a shard.
func New(shard model.ShardKey) *Store {
	return &Store{
		shard:     shard,
		services:  map[model.ServiceKey]*model.Service{},
		byHost:    map[model.Hostname]hostServices{},
		endpoints: map[model.ServiceKey]*endpointSet{},
		workloads: map[model.WorkloadKey]*model.WorkloadInstance{},
		diags:     map[string][]model.Diagnostic{},
	}
}

// Reserve makes an empty store ready for about the given numbers of
// services and of workloads (and of addresses: one per workload), so
// that a registry's initial state does not grow its maps step by step.
// It does nothing to a store that holds anything or was sized before:
// the first estimate stands, and the maps grow past it as needed.
func (s *Store) Reserve(services, workloads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.services) > 0 || len(s.endpoints) > 0 || len(s.workloads) > 0 || s.sized {
		return
	}
	s.sized = true
	s.services = make(map[model.ServiceKey]*model.Service, services)
	s.byHost = make(map[model.Hostname]hostServices, services)
	s.endpoints = make(map[model.ServiceKey]*endpointSet, services)
	s.workloads = make(map[model.WorkloadKey]*model.WorkloadInstance, workloads)
	s.workloadsByIP.Reserve(workloads)
	s.byIP.Reserve(workloads)
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
// releases endpoints stored for it earlier; a change of provider withdraws
// the endpoints of the old provider's shards and releases the new one's.
func (s *Store) UpsertService(svc *model.Service) {
	key := svc.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services[key]
	if prev.Equals(svc) {
		return
	}
	set := s.endpoints[key]
	// Shards hidden by the change are withdrawn before the service event,
	// shards revealed by it are released after, so that a subscriber never
	// holds endpoints of a service it does not know.
	s.withdraw(key, set, prev, svc)
	s.services[key] = svc
	if set != nil {
		set.svc = svc
	}
	s.setByHost(key.Hostname, prev, svc)
	s.servicesView.Store(nil)
	if prev == nil {
		s.notifier.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: svc})
	} else {
		// Indexed endpoints reach the service through their set, so they
		// need no update when the service changes.
		s.notifier.Notify(registry.ServiceEvent{Type: model.EventUpdate, Previous: prev, Current: svc})
	}
	s.release(key, set, prev, svc)
}

// DeleteService removes a service. Its endpoints are withdrawn from
// subscribers (an empty endpoints event per shard) before the delete, but
// kept, to be released again if the service comes back.
func (s *Store) DeleteService(key model.ServiceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.services[key]
	if prev == nil {
		return
	}
	set := s.endpoints[key]
	s.withdraw(key, set, prev, nil)
	delete(s.services, key)
	if set != nil {
		set.svc = nil
	}
	s.setByHost(key.Hostname, prev, nil)
	s.servicesView.Store(nil)
	s.notifier.Notify(registry.ServiceEvent{Type: model.EventDelete, Previous: prev})
}

// withdraw publishes an empty list for each shard of set visible under
// prev but not under cur, and unindexes its endpoints.
func (s *Store) withdraw(key model.ServiceKey, set *endpointSet, prev, cur *model.Service) {
	if set == nil {
		return
	}
	changed := false
	for shard, eps := range set.byShard.All() {
		if visible(prev, shard) && !visible(cur, shard) {
			s.unindex(eps)
			s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: key})
			changed = true
		}
	}
	if changed {
		set.merged = s.merge(set, cur)
	}
}

// release publishes the list of each shard of set visible under cur but
// not under prev, and indexes its endpoints.
func (s *Store) release(key model.ServiceKey, set *endpointSet, prev, cur *model.Service) {
	if set == nil {
		return
	}
	changed := false
	for shard, eps := range set.byShard.All() {
		if !visible(prev, shard) && visible(cur, shard) {
			s.index(set, eps)
			s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: key, Endpoints: eps})
			changed = true
		}
	}
	if changed {
		set.merged = s.merge(set, cur)
	}
}

// SetEndpoints replaces the endpoints of a service in the store's own
// shard. See SetShardEndpoints.
func (s *Store) SetEndpoints(key model.ServiceKey, eps []*model.Endpoint) {
	s.SetShardEndpoints(s.shard, key, eps)
}

// SetShardEndpoints replaces one shard's endpoints of a service. The store
// keeps eps, sorted: a list already in order (as every registry publishes
// its lists) is kept as it is and never written to, so another registry's
// published list can be passed on without a copy; any other is sorted in
// place (under the store's lock). It publishes nothing when the list is
// equal to the one stored, or while the shard is not visible (the service
// is absent, or comes from another provider).
func (s *Store) SetShardEndpoints(shard model.ShardKey, key model.ServiceKey, eps []*model.Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.endpoints[key]
	var prev []*model.Endpoint
	if set != nil {
		prev, _ = set.byShard.Get(shard)
	}
	if !replacesInPlace(prev, eps) && !sortedAfter(prev, eps) {
		slices.SortFunc(eps, model.CompareEndpoints)
	}
	if model.EndpointsEqual(prev, eps) {
		return
	}
	if set == nil {
		set = &endpointSet{key: key, svc: s.services[key]}
		s.endpoints[key] = set
	}
	if len(eps) == 0 {
		eps = nil
		set.byShard.Delete(shard)
	} else {
		set.byShard.Set(shard, eps)
	}
	svc := set.svc // s.services[key], kept in the set
	if visible(svc, shard) {
		s.reindex(set, prev, eps)
		set.merged = s.merge(set, svc)
		s.notifier.Notify(registry.EndpointsEvent{Shard: shard, Service: key, Endpoints: eps})
	}
	if set.byShard.Len() == 0 {
		delete(s.endpoints, key)
	}
}

// replacesInPlace reports whether eps is prev (a sorted list) with some
// endpoints replaced by ones that sort the same: eps is then sorted too,
// which this tells without reading the endpoints that stayed. A change
// to a few endpoints of a long list (a pod's labels, a readiness flip)
// comes as such a list, and the endpoints left alone are the ones least
// likely to be in the processor's cache.
func replacesInPlace(prev, eps []*model.Endpoint) bool {
	if len(prev) != len(eps) || len(eps) == 0 {
		return false
	}
	for i, ep := range eps {
		if ep != prev[i] && (ep == nil || model.CompareEndpoints(prev[i], ep) != 0) {
			return false
		}
	}
	return true
}

// sortedAfter reports whether eps is sorted (model.CompareEndpoints),
// given that prev is: two neighbours of eps that prev holds in the same
// order (see Trail) are in order without being read. Only the pairs with
// an endpoint that prev does not hold there are compared, so a long list
// that lost or gained a few endpoints (a slice's scale-up, a
// recomputation that kept most endpoints) is checked in pointer
// comparisons.
func sortedAfter(prev, eps []*model.Endpoint) bool {
	t := NewTrail(prev)
	prevHeld := false // eps[i-1] is prev's
	for i, ep := range eps {
		held := t.Holds(i, ep)
		if i > 0 && !(held && prevHeld) && model.CompareEndpoints(eps[i-1], ep) > 0 {
			return false
		}
		prevHeld = held
	}
	return true
}

// A Trail follows a new list of endpoints along the list it replaces, to
// tell which of its endpoints are the old list's without reading any:
// Holds, called for each endpoint of the new list in order, reports
// whether the old list holds that very endpoint (the same pointer) at the
// same index, or at most trailWindow places after the last one it held.
// The places of the endpoints held grow with their index in the new list,
// so that two held endpoints are in the old list's order. A list that
// keeps most of its predecessor's endpoints (a few replaced, added or
// removed) is so followed in pointer comparisons; after a run of more than
// trailWindow new endpoints at other places, the rest of the list counts
// as new. The zero Trail holds nothing.
type Trail struct {
	prev []*model.Endpoint
	last int // where in prev the last endpoint held is; -1 before any
}

// trailWindow is how far past the last endpoint held a Trail looks.
const trailWindow = 4

// NewTrail returns a Trail along prev.
func NewTrail(prev []*model.Endpoint) Trail { return Trail{prev: prev, last: -1} }

// Holds reports whether prev holds ep, the new list's endpoint at index
// i, where the Trail looks (see Trail).
func (t *Trail) Holds(i int, ep *model.Endpoint) bool {
	if i > t.last && i < len(t.prev) && t.prev[i] == ep {
		t.last = i
		return true
	}
	return t.near(ep)
}

// near is Holds past the same index: the window after the last endpoint
// held. Apart, so that Holds's usual case is inlined.
func (t *Trail) near(ep *model.Endpoint) bool {
	for k := t.last + 1; k < len(t.prev) && k <= t.last+trailWindow; k++ {
		if t.prev[k] == ep {
			t.last = k
			return true
		}
	}
	return false
}

// ClearShard removes every endpoint list of a shard, as SetShardEndpoints
// with an empty list would for each service.
func (s *Store) ClearShard(shard model.ShardKey) {
	s.mu.RLock()
	var keys []model.ServiceKey
	for key, set := range s.endpoints {
		if set.byShard.Has(shard) {
			keys = append(keys, key)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		s.SetShardEndpoints(shard, key, nil)
	}
}

// merge returns the sorted union of the shards of set visible for svc.
func (s *Store) merge(set *endpointSet, svc *model.Service) []*model.Endpoint {
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
	key := w.Key()
	prev := s.workloads[key]
	if prev.Equals(w) {
		return
	}
	s.workloads[key] = w
	switch {
	case prev != nil && slices.Equal(prev.Endpoint.Addresses, w.Endpoint.Addresses):
		// Same addresses and key: w takes prev's place in each list.
		for _, ip := range w.Endpoint.Addresses {
			s.workloadsByIP.Set(ip, replaced(s.workloadsByIP.Get(ip), prev, w))
		}
	default:
		if prev != nil {
			s.unindexWorkload(prev)
		}
		for _, ip := range w.Endpoint.Addresses {
			s.workloadsByIP.Set(ip, insertSorted(s.workloadsByIP.Get(ip), w))
		}
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
// index, keeping precedence order (model.ComparePrecedence).
func (s *Store) setByHost(host model.Hostname, prev, cur *model.Service) {
	list := s.byHost[host].all
	if prev != nil {
		list = slices.DeleteFunc(slices.Clone(list), func(x *model.Service) bool { return x == prev })
	}
	if cur != nil {
		list = append(list, cur)
		slices.SortFunc(list, model.ComparePrecedence)
	}
	if len(list) == 0 {
		delete(s.byHost, host)
	} else {
		s.byHost[host] = hostServices{first: list[0], all: list}
	}
}

// hostServices are the services of a hostname in precedence order; first
// is all[0], kept in the map's value so that GetService reads no more
// memory than the map entry.
type hostServices struct {
	first *model.Service
	all   []*model.Service
}

func (s *Store) index(set *endpointSet, eps []*model.Endpoint) {
	for _, ep := range eps {
		for _, ip := range ep.Addresses {
			s.byIP.Set(ip, append(s.byIP.Get(ip), ipRef{set: set, ep: ep}))
		}
	}
}

// reindex moves the IP index from a shard's previous list to its new one,
// both sorted by model.CompareEndpoints. An endpoint in both lists (the
// same pointer: registries pass unchanged endpoints on as they were) keeps
// its entries, so a change re-indexes only what changed. Endpoints that
// compare equal without being the same are handled as a group, in
// whatever order each list holds them.
func (s *Store) reindex(set *endpointSet, prev, eps []*model.Endpoint) {
	for len(prev) > 0 || len(eps) > 0 {
		c := 0
		switch {
		case len(prev) == 0:
			c = 1
		case len(eps) == 0:
			c = -1
		case prev[0] == eps[0]:
			prev, eps = prev[1:], eps[1:]
			continue
		default:
			c = model.CompareEndpoints(prev[0], eps[0])
		}
		switch {
		case c < 0:
			s.unindex(prev[:1])
			prev = prev[1:]
		case c > 0:
			s.index(set, eps[:1])
			eps = eps[1:]
		default:
			i := 1
			for i < len(prev) && model.CompareEndpoints(prev[i], prev[0]) == 0 {
				i++
			}
			j := 1
			for j < len(eps) && model.CompareEndpoints(eps[j], eps[0]) == 0 {
				j++
			}
			if i == 1 && j == 1 && slices.Equal(prev[0].Addresses, eps[0].Addresses) {
				// One endpoint replaced by another at the same
				// addresses (a health or metadata change): it takes
				// the old one's place in each address's entry.
				s.replaceIndexed(set, prev[0], eps[0])
				prev, eps = prev[1:], eps[1:]
				continue
			}
			for _, ep := range prev[:i] {
				if !slices.Contains(eps[:j], ep) {
					s.unindex([]*model.Endpoint{ep})
				}
			}
			for _, ep := range eps[:j] {
				if !slices.Contains(prev[:i], ep) {
					s.index(set, []*model.Endpoint{ep})
				}
			}
			prev, eps = prev[i:], eps[j:]
		}
	}
}

// replaceIndexed puts ep in prev's place in the IP index, prev and ep
// having the same addresses. The index's entries are the store's own (a
// query copies what it reads from one under the read lock; unindex, too,
// edits them in place), so the entry is written in place.
func (s *Store) replaceIndexed(set *endpointSet, prev, ep *model.Endpoint) {
	for _, ip := range ep.Addresses {
		refs := s.byIP.Get(ip)
		if k := slices.IndexFunc(refs, func(r ipRef) bool { return r.ep == prev }); k >= 0 {
			refs[k].ep = ep
		} else {
			s.byIP.Set(ip, append(refs, ipRef{set: set, ep: ep}))
		}
	}
}

func (s *Store) unindex(eps []*model.Endpoint) {
	for _, ep := range eps {
		for _, ip := range ep.Addresses {
			refs := slices.DeleteFunc(s.byIP.Get(ip), func(r ipRef) bool { return r.ep == ep })
			if len(refs) == 0 {
				s.byIP.Delete(ip)
			} else {
				s.byIP.Set(ip, refs)
			}
		}
	}
}

func (s *Store) unindexWorkload(w *model.WorkloadInstance) {
	for _, ip := range w.Endpoint.Addresses {
		list := slices.DeleteFunc(slices.Clone(s.workloadsByIP.Get(ip)), func(x *model.WorkloadInstance) bool { return x == w })
		if len(list) == 0 {
			s.workloadsByIP.Delete(ip)
		} else {
			s.workloadsByIP.Set(ip, list)
		}
	}
}

// replaced returns a copy of list with prev replaced by w; the old slice
// may be held by a caller and is not modified.
func replaced(list []*model.WorkloadInstance, prev, w *model.WorkloadInstance) []*model.WorkloadInstance {
	i := slices.Index(list, prev)
	if i < 0 {
		return insertSorted(list, w)
	}
	out := slices.Clone(list)
	out[i] = w
	return out
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

// compareWorkloads orders workloads by key (model.WorkloadKey.Compare).
func compareWorkloads(a, b *model.WorkloadInstance) int { return a.Key().Compare(b.Key()) }
