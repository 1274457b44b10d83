package kube

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The Controller's queries and subscriptions (registry.Discovery and
// registry.Controller) answer from its store, which holds what the worker
// last wrote: safe for concurrent use at any time, and empty until Run
// has converted the initial state.

// Services returns every Service of the selected namespaces, sorted by
// hostname, then namespace.
func (c *Controller) Services() []*model.Service { return c.store.Services() }

// GetService returns the Service with the hostname, or nil.
func (c *Controller) GetService(hostname model.Hostname) *model.Service {
	return c.store.GetService(hostname)
}

// ServiceByKey returns the Service of a hostname in a namespace, or nil.
func (c *Controller) ServiceByKey(key model.ServiceKey) *model.Service {
	return c.store.ServiceByKey(key)
}

// Endpoints returns the endpoints of a Service, sorted (see
// registry.Discovery).
func (c *Controller) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	return c.store.Endpoints(key, q)
}

// Workloads returns the live pods with an IP, as workload instances
// (Unhealthy when they do not serve: not Ready, or being deleted),
// sorted by cluster, kind, namespace and name.
func (c *Controller) Workloads() []*model.WorkloadInstance { return c.store.Workloads() }

// WorkloadsByIP returns the workload instances of the pods at the
// address.
func (c *Controller) WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance {
	return c.store.WorkloadsByIP(ip)
}

// NetworkGateways returns the network gateways the cluster's Services
// declare (see the package doc), sorted.
func (c *Controller) NetworkGateways() []model.NetworkGateway { return c.store.NetworkGateways() }

// ProxyTargets returns the service ports that a workload serves (see
// registry.Discovery).
func (c *Controller) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	return c.store.ProxyTargets(q)
}

// Diagnostics returns what the registry refused or could not fully use,
// sorted by model.CompareDiagnostics.
func (c *Controller) Diagnostics() []model.Diagnostic { return c.store.Diagnostics() }

// Subscribe registers a handler; it first receives the current state,
// then every change. See registry.Controller.
func (c *Controller) Subscribe(h registry.Handler) (unsubscribe func()) { return c.store.Subscribe(h) }

// HasSynced reports whether the initial state is converted and has
// reached every handler subscribed by then.
func (c *Controller) HasSynced() bool { return c.store.HasSynced() }
