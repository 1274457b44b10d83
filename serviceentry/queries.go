package serviceentry

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The Controller's queries and subscriptions (registry.Discovery and
// registry.Controller) answer from its store, which holds what the worker
// last wrote: safe for concurrent use at any time, and empty until Run
// has converted the initial state.

// Services returns every ServiceEntry host's service, one per host and
// namespace, sorted by hostname, then namespace.
func (c *Controller) Services() []*model.Service { return c.store.Services() }

// GetService returns the service of the hostname, or nil. When entries of
// several namespaces declare it, the oldest wins, then the first by
// namespace (model.ComparePrecedence).
func (c *Controller) GetService(hostname model.Hostname) *model.Service {
	return c.store.GetService(hostname)
}

// ServiceByKey returns the service of a host in a namespace, or nil.
func (c *Controller) ServiceByKey(key model.ServiceKey) *model.Service {
	return c.store.ServiceByKey(key)
}

// Endpoints returns the endpoints of a service, sorted (see
// registry.Discovery): those of every entry declaring its host in its
// namespace, for the ports of the entry that wins it.
func (c *Controller) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	return c.store.Endpoints(key, q)
}

// Workloads returns the workload instances of the WorkloadEntries in use,
// sorted by cluster, kind, namespace and name.
func (c *Controller) Workloads() []*model.WorkloadInstance { return c.store.Workloads() }

// WorkloadsByIP returns the workload instances of the WorkloadEntries in
// use with the address.
func (c *Controller) WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance {
	return c.store.WorkloadsByIP(ip)
}

// ProxyTargets returns the service ports that a workload serves (see
// registry.Discovery).
func (c *Controller) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	return c.store.ProxyTargets(q)
}

// Diagnostics returns what the registry refused or could not fully use
// (entries left out or used in part), sorted by model.CompareDiagnostics.
func (c *Controller) Diagnostics() []model.Diagnostic { return c.store.Diagnostics() }

// Subscribe registers a handler; it first receives the current state,
// then every change. See registry.Controller.
func (c *Controller) Subscribe(h registry.Handler) (unsubscribe func()) {
	return c.store.Subscribe(h)
}

// HasSynced reports whether Run has converted the source's initial state
// and it has reached every handler subscribed by then.
func (c *Controller) HasSynced() bool { return c.store.HasSynced() }
