package aggregate

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The Controller's queries and Subscribe answer from the merged state of
// every registry (the global merger's store); HasSynced and Diagnostics
// add the registries' own (aggregate.go).

// Services returns every merged service, sorted by hostname, then
// namespace.
func (c *Controller) Services() []*model.Service { return c.global.st.Services() }

// GetService returns the service with the hostname that wins precedence
// (model.ComparePrecedence: a Kubernetes Service, else the oldest
// ServiceEntry, else by namespace and name), or nil.
func (c *Controller) GetService(hostname model.Hostname) *model.Service {
	return c.global.st.GetService(hostname)
}

// ServiceByKey returns the merged service with the key, or nil.
func (c *Controller) ServiceByKey(key model.ServiceKey) *model.Service {
	return c.global.st.ServiceByKey(key)
}

// Endpoints returns the endpoints of a service, of every shard of the
// provider that wins it, sorted (see registry.Discovery).
func (c *Controller) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	return c.global.st.Endpoints(key, q)
}

// Workloads returns the workloads of every registry, sorted by cluster,
// kind, namespace and name.
func (c *Controller) Workloads() []*model.WorkloadInstance { return c.global.st.Workloads() }

// NetworkGateways returns the network gateways of every registry and of
// Options.MeshNetworks, sorted by model.NetworkGateway.Compare, without
// duplicates.
func (c *Controller) NetworkGateways() []model.NetworkGateway { return c.global.st.NetworkGateways() }

// WorkloadsByIP returns the workloads of every registry with the address.
func (c *Controller) WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance {
	return c.global.st.WorkloadsByIP(ip)
}

// ProxyTargets returns the service ports that a workload serves (see
// registry.Discovery).
func (c *Controller) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	return c.global.st.ProxyTargets(q)
}

// Subscribe registers a handler for the merged state's events; it first
// receives the current state. See registry.Controller.
func (c *Controller) Subscribe(h registry.Handler) (unsubscribe func()) {
	return c.global.st.Subscribe(h)
}

// Clusters returns every kube registry's cluster data, sorted by ID.
func (c *Controller) Clusters() []model.Cluster { return c.global.st.Clusters() }

// Namespaces returns every kube registry's namespaces, sorted by
// cluster and name.
func (c *Controller) Namespaces() []*model.Namespace { return c.global.st.Namespaces() }

// Gateways returns every kube registry's Gateway API Gateways, sorted by
// cluster, namespace and name.
func (c *Controller) Gateways() []*model.Gateway { return c.global.st.Gateways() }
