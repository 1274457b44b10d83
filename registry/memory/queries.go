package memory

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The Registry's queries and subscriptions (registry.Discovery and
// registry.Controller) answer from its store, exactly as the kube and
// serviceentry registries answer from theirs.

// Services returns every service, sorted by hostname, then namespace.
func (r *Registry) Services() []*model.Service { return r.store.Services() }

// GetService returns the service with the hostname, or nil. When several
// namespaces declare it, the one that wins model.ComparePrecedence is
// returned (the oldest, then by namespace and name).
func (r *Registry) GetService(hostname model.Hostname) *model.Service {
	return r.store.GetService(hostname)
}

// ServiceByKey returns the service with the key, or nil.
func (r *Registry) ServiceByKey(key model.ServiceKey) *model.Service {
	return r.store.ServiceByKey(key)
}

// Endpoints returns the endpoints of a service, sorted (see
// registry.Discovery); none while the service is absent.
func (r *Registry) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	return r.store.Endpoints(key, q)
}

// Workloads returns every workload instance, sorted by cluster, kind,
// namespace and name.
func (r *Registry) Workloads() []*model.WorkloadInstance { return r.store.Workloads() }

// WorkloadsByIP returns the workload instances with the address.
func (r *Registry) WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance {
	return r.store.WorkloadsByIP(ip)
}

// ProxyTargets returns the service ports that a workload serves (see
// registry.Discovery).
func (r *Registry) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	return r.store.ProxyTargets(q)
}

// Diagnostics returns the diagnostics added, sorted by
// model.CompareDiagnostics.
func (r *Registry) Diagnostics() []model.Diagnostic { return r.store.Diagnostics() }

// NetworkGateways returns the gateways set by SetNetworkGateways, sorted.
func (r *Registry) NetworkGateways() []model.NetworkGateway { return r.store.NetworkGateways() }

// Subscribe registers a handler; it first receives the current state,
// then every change. See registry.Controller.
func (r *Registry) Subscribe(h registry.Handler) (unsubscribe func()) {
	return r.store.Subscribe(h)
}

// HasSynced reports whether Run has started and the state written before
// it has reached every handler subscribed by then.
func (r *Registry) HasSynced() bool { return r.store.HasSynced() }

// PendingSync returns what the initial sync waits for: Run
// (registry.PendingRun), then the initial state reaching the subscribed
// handlers (registry.PendingInitial); nil once synced.
func (r *Registry) PendingSync() []registry.Pending {
	if r.store.HasSynced() {
		return nil
	}
	r.mu.Lock()
	ran := r.ran
	r.mu.Unlock()
	reason := registry.PendingInitial
	if !ran {
		reason = registry.PendingRun
	}
	return []registry.Pending{{Shard: r.shard, Reason: reason}}
}

// Settled reports whether the events of every write so far have reached
// every handler. Writes apply at once; their events are delivered on the
// subscriptions' goroutines.
func (r *Registry) Settled() bool { return r.store.Idle() }
