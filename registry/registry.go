package registry

import (
	"context"
	"errors"
	"net/netip"

	"github.com/meshreg/meshreg/model"
)

// Discovery answers queries over a registry's current state.
//
// Every method is safe for concurrent use. Returned values and slices are
// shared with the registry and with other callers and must not be modified;
// they are never modified by the registry either, so they may be kept. The
// answers of one call are consistent with each other; two calls may see
// different states if the registry changed between them.
type Discovery interface {
	// Services returns every service, sorted by hostname, then namespace.
	Services() []*model.Service

	// GetService returns the service with the given hostname, or nil.
	// When several namespaces declare the hostname, the one that wins
	// precedence is returned: a Kubernetes Service before a
	// ServiceEntry, then the oldest, then by namespace and name.
	GetService(hostname model.Hostname) *model.Service

	// ServiceByKey returns the service with the given hostname in the
	// given namespace, or nil.
	ServiceByKey(key model.ServiceKey) *model.Service

	// Endpoints returns the endpoints of a service, one per (workload,
	// service port), sorted as the dump sorts them (service port,
	// cluster, address, port). The query narrows the answer to one
	// service port or one cluster.
	Endpoints(key model.ServiceKey, q EndpointQuery) []*model.Endpoint

	// Workloads returns every workload instance, sorted by cluster,
	// kind, namespace and name. A Pod that does not serve (not Ready,
	// or being deleted) is listed with Endpoint.Health Unhealthy;
	// selectors take only Healthy ones.
	Workloads() []*model.WorkloadInstance

	// WorkloadsByIP returns the workload instances that have the given
	// address, sorted as Workloads sorts them.
	WorkloadsByIP(ip netip.Addr) []*model.WorkloadInstance

	// ProxyTargets returns the service ports that a workload serves:
	// every endpoint whose addresses include one of q.IPs yields its
	// service and port, narrowed to the workload's namespace and cluster
	// as q says. Targets are sorted by hostname, namespace and port,
	// without duplicates.
	ProxyTargets(q ProxyQuery) []model.ServiceTarget

	// Diagnostics returns what the registry refused or could not fully
	// use, sorted by model.CompareDiagnostics.
	Diagnostics() []model.Diagnostic
}

// MetadataDiscovery is implemented by registries that hold cluster
// metadata: the kube controller (its cluster's network, Namespaces and,
// with a Gateway API client, Gateways), the aggregate (every member's)
// and registry/memory. Such a registry publishes a ClusterEvent,
// NamespaceEvent or GatewayEvent to each MetadataHandler for every
// change. The values are shared and must not be modified.
type MetadataDiscovery interface {
	// Clusters returns every cluster's data, sorted by ID.
	Clusters() []model.Cluster
	// Namespaces returns every namespace, sorted by cluster, then name.
	Namespaces() []*model.Namespace
	// Gateways returns every Gateway API Gateway, sorted by cluster,
	// namespace, then name.
	Gateways() []*model.Gateway
}

// GatewayDiscovery is implemented by registries that know network
// gateways: the kube controller (Services labelled with a network) and
// the aggregate (every member's, and the mesh networks'). Such a registry
// publishes a NetworkGatewaysEvent to each GatewayHandler when its list
// changes.
type GatewayDiscovery interface {
	// NetworkGateways returns every network gateway, sorted by
	// model.NetworkGateway.Compare, without duplicates. The slice is
	// shared and must not be modified.
	NetworkGateways() []model.NetworkGateway
}

// EndpointQuery narrows an Endpoints query. The zero value asks for every
// endpoint of the service.
type EndpointQuery struct {
	// Port is a service port name; "" means every port.
	Port string
	// Cluster is a cluster ID; "" means every cluster.
	Cluster model.ClusterID
}

// Matches reports whether an endpoint is within the query.
func (q EndpointQuery) Matches(e *model.Endpoint) bool {
	return (q.Port == "" || e.ServicePortName == q.Port) && (q.Cluster == "" || e.Cluster == q.Cluster)
}

// ProxyQuery names a workload for ProxyTargets, by its addresses, and
// scopes the answer as Istio scopes a proxy's service targets.
type ProxyQuery struct {
	// IPs are the workload's addresses.
	IPs []netip.Addr
	// Namespace, when not "", keeps only services in that namespace, so
	// that a workload cannot be made to back another namespace's
	// services.
	Namespace string
	// Cluster, when not "", keeps a Kubernetes Service's endpoints only
	// from that cluster: a proxy serves its own cluster's Services, and
	// another cluster's pod may have the same IP. A ServiceEntry's
	// endpoints count from every cluster, as Istio searches the
	// ServiceEntry registry for every proxy.
	Cluster model.ClusterID
}

// ErrAlreadyRunning is wrapped by the error of a Run called on a
// registry, aggregate or view that is running or has run: each runs once.
var ErrAlreadyRunning = errors.New("already running or has run")

// Controller is the running side of a registry.
type Controller interface {
	// Run starts the registry and blocks until ctx is done, then stops
	// every goroutine it started and returns. It returns an error when
	// the registry cannot start; a registry runs at most once, and a
	// second call returns an error wrapping ErrAlreadyRunning.
	Run(ctx context.Context) error

	// HasSynced reports whether the registry's initial state is complete
	// and has reached every handler that was subscribed when the state
	// became complete.
	HasSynced() bool

	// Subscribe registers a handler and returns a function that
	// unregisters it. See Handler for the order and concurrency of calls.
	// The handler first receives the registry's current state as add
	// events, then every change. The returned function is idempotent
	// and safe for concurrent use; it drops the handler's queued events,
	// and a call already under way when it ran may still complete. It may
	// be called from within the handler.
	Subscribe(h Handler) (unsubscribe func())
}

// Registry is a source of services, endpoints and workloads: a Kubernetes
// cluster, a set of ServiceEntries, an in-memory fixture, or an aggregate
// of those.
type Registry interface {
	Discovery
	Controller
	// Provider is the kind of registry.
	Provider() model.Provider
	// Cluster is the cluster the registry's objects belong to.
	Cluster() model.ClusterID
}
