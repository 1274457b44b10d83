package store

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Reader is the read side of a Store: registry.Discovery plus Subscribe and
// HasSynced. Registries embed it.
type Reader struct {
	s *Store
}

var _ registry.Discovery = (*Reader)(nil)

// Services returns every service sorted by hostname and namespace. The
// slice is cached until the next change.
func (r *Reader) Services() []*model.Service {
	if v := r.s.servicesView.Load(); v != nil {
		return *v
	}
	s := r.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*model.Service, 0, len(s.services))
	for _, svc := range s.services {
		out = append(out, svc)
	}
	slices.SortFunc(out, CompareServices)
	s.servicesView.Store(&out)
	return out
}

// CompareServices orders services by key (model.ServiceKey.Compare), as
// the dump does: by hostname, then namespace.
func CompareServices(a, b *model.Service) int { return a.Key().Compare(b.Key()) }

// GetService returns the service with the hostname that wins precedence.
func (r *Reader) GetService(hostname model.Hostname) *model.Service {
	r.s.mu.RLock()
	defer r.s.mu.RUnlock()
	return r.s.byHost[hostname].first
}

// ServiceByKey returns the service with the key, or nil.
func (r *Reader) ServiceByKey(key model.ServiceKey) *model.Service {
	r.s.mu.RLock()
	defer r.s.mu.RUnlock()
	return r.s.services[key]
}

// Endpoints returns the endpoints of a present service. Without a filter
// the stored slice itself is returned.
func (r *Reader) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	r.s.mu.RLock()
	defer r.s.mu.RUnlock()
	set := r.s.endpoints[key]
	if set == nil || set.svc == nil {
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
func (r *Reader) Workloads() []*model.WorkloadInstance {
	if v := r.s.workloadsView.Load(); v != nil {
		return *v
	}
	s := r.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*model.WorkloadInstance, 0, len(s.workloads))
	for _, w := range s.workloads {
		out = append(out, w)
	}
	slices.SortFunc(out, compareWorkloads)
	s.workloadsView.Store(&out)
	return out
}

// WorkloadsByIP returns the workloads with the address.
func (r *Reader) WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance {
	r.s.mu.RLock()
	defer r.s.mu.RUnlock()
	return r.s.workloadsByIP.Get(ip)
}

// ProxyTargets returns the service ports served by endpoints with one of
// the IPs, limited to a namespace when one is given.
func (r *Reader) ProxyTargets(namespace string, ips ...netip.Addr) []model.ServiceTarget {
	r.s.mu.RLock()
	defer r.s.mu.RUnlock()
	var out []model.ServiceTarget
	for _, ip := range ips {
		refs := r.s.byIP.Get(ip)
		for _, ref := range refs {
			if namespace != "" && ref.set.key.Namespace != namespace {
				continue
			}
			svc := ref.set.svc // indexed endpoints belong to present services
			port, ok := svc.PortByName(ref.ep.ServicePortName)
			if !ok {
				continue
			}
			if out == nil {
				out = make([]model.ServiceTarget, 0, len(refs))
			}
			out = append(out, model.ServiceTarget{Service: svc, Port: port, TargetPort: ref.ep.Port})
		}
	}
	return SortTargets(out)
}

// SortTargets sorts targets by hostname, namespace, port and target port
// and drops duplicates.
func SortTargets(ts []model.ServiceTarget) []model.ServiceTarget {
	if len(ts) < 2 {
		return ts
	}
	c := func(a, b model.ServiceTarget) int {
		if c := CompareServices(a.Service, b.Service); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Port.Port, b.Port.Port); c != 0 {
			return c
		}
		return cmp.Compare(a.TargetPort, b.TargetPort)
	}
	slices.SortFunc(ts, c)
	return slices.CompactFunc(ts, func(a, b model.ServiceTarget) bool { return c(a, b) == 0 })
}

// Diagnostics returns every diagnostic, sorted. The slice is cached until
// the next change.
func (r *Reader) Diagnostics() []model.Diagnostic {
	if v := r.s.diagsView.Load(); v != nil {
		return *v
	}
	s := r.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []model.Diagnostic{}
	for _, ds := range s.diags {
		out = append(out, ds...)
	}
	model.SortDiagnostics(out)
	s.diagsView.Store(&out)
	return out
}

// Subscribe registers h; it first receives the current state.
func (r *Reader) Subscribe(h registry.Handler) (unsubscribe func()) {
	s := r.s
	// Exclusive, so that no write slips between the snapshot and the
	// registration.
	s.mu.Lock()
	defer s.mu.Unlock()
	svcs := make([]*model.Service, 0, len(s.services))
	for _, svc := range s.services {
		svcs = append(svcs, svc)
	}
	slices.SortFunc(svcs, CompareServices)
	initial := make([]registry.Event, 0, 2*len(svcs)+len(s.workloads))
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
				initial = append(initial, registry.EndpointsEvent{Shard: shard, Service: svc.Key(), Endpoints: eps, Initial: true})
			}
		}
	}
	ws := make([]*model.WorkloadInstance, 0, len(s.workloads))
	for _, w := range s.workloads {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, compareWorkloads)
	for _, w := range ws {
		initial = append(initial, registry.WorkloadEvent{Type: model.EventAdd, Current: w, Initial: true})
	}
	return s.notifier.Subscribe(h, initial)
}

// HasSynced reports whether MarkSynced was called and every event published
// until then has reached the handlers.
func (r *Reader) HasSynced() bool {
	return r.s.synced.Load() && r.s.notifier.Delivered(r.s.syncMark.Load())
}

// Idle reports whether every event published so far has reached every
// subscriber's handler.
func (r *Reader) Idle() bool {
	return r.s.notifier.Delivered(r.s.notifier.Mark())
}

// Subscribers returns the number of subscriptions.
func (r *Reader) Subscribers() int { return r.s.notifier.Len() }
