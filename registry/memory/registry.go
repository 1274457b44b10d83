package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/internal/metrics"
	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// DefaultClusterID is the cluster of a Registry whose Options name none.
const DefaultClusterID model.ClusterID = "cluster-1"

// Errors returned by a Registry, wrapped with the object they concern.
var (
	// ErrNotFound: the object to update is not in the registry.
	ErrNotFound = errors.New("not found")
)

// Options configure a Registry. The zero value is valid.
type Options struct {
	// ClusterID is the cluster the registry's objects belong to.
	// Default: DefaultClusterID.
	ClusterID model.ClusterID
	// Provider is the kind of registry to imitate: model.Kubernetes or
	// model.External. Default: model.Kubernetes.
	Provider model.Provider
	// Metrics, when set, receives the registry's Prometheus metrics,
	// labelled with its provider and cluster, as a kube or serviceentry
	// controller's: events published, subscribers' queues, sizes,
	// diagnostics, the initial sync. A Registerer that refuses them is
	// New's error. Default: nil, none.
	Metrics prometheus.Registerer
}

// withDefaults returns o with every unset field set to its default.
func (o Options) withDefaults() Options {
	if o.ClusterID == "" {
		o.ClusterID = DefaultClusterID
	}
	if o.Provider == 0 {
		o.Provider = model.Kubernetes
	}
	// Metrics: nil means none.
	return o
}

// Registry is an in-memory registry.Registry. It is safe for concurrent
// use. Create one with New.
type Registry struct {
	// store holds what the test wrote, and answers the queries and
	// subscriptions (queries.go).
	store *store.Store
	shard model.ShardKey
	opts  Options

	// writeMu serialises writes, so that UpdateService's read, change and
	// write is not interleaved with another write. Never held while
	// calling a handler (the store does not call handlers).
	writeMu sync.Mutex

	// metrics is nil unless Options.Metrics is set.
	metrics *metrics.Registry
	// mu guards diags and ran.
	mu    sync.Mutex
	diags []model.Diagnostic
	ran   bool
}

var (
	_ registry.Registry         = (*Registry)(nil)
	_ registry.GatewayDiscovery = (*Registry)(nil)
	_ registry.Settler          = (*Registry)(nil)
	_ registry.SyncReporter     = (*Registry)(nil)
)

// diagnosticsOwner is the store key under which the registry keeps its
// diagnostics.
const diagnosticsOwner = "memory"

// New returns an empty registry. A metrics Registerer that refuses the
// registry's metrics is an error.
func New(opts Options) (*Registry, error) {
	opts = opts.withDefaults()
	r := &Registry{store: store.New(), shard: model.ShardKey{Provider: opts.Provider, Cluster: opts.ClusterID}, opts: opts}
	m, err := metrics.New(opts.Metrics, opts.Provider.String(), opts.ClusterID)
	if err != nil {
		return nil, fmt.Errorf("%s: metrics: %w", r, err)
	}
	if m != nil {
		r.store.Observe(m)
		m.Watch(metrics.State{Discovery: r, QueueDepths: r.store.QueueDepths})
	}
	r.metrics = m
	return r, nil
}

// Provider returns the registry's provider.
func (r *Registry) Provider() model.Provider { return r.opts.Provider }

// Cluster returns the registry's cluster.
func (r *Registry) Cluster() model.ClusterID { return r.opts.ClusterID }

// String names the registry, e.g. "memory registry Kubernetes/cluster-1".
func (r *Registry) String() string {
	return "memory registry " + r.opts.Provider.String() + "/" + string(r.opts.ClusterID)
}

// Run marks the registry's current state as its initial state and blocks
// until ctx is done; it starts no goroutine. HasSynced turns true once
// that state has reached every subscribed handler. A registry runs once:
// a second call returns an error wrapping registry.ErrAlreadyRunning at
// once.
func (r *Registry) Run(ctx context.Context) error {
	r.mu.Lock()
	ran := r.ran
	r.ran = true
	r.mu.Unlock()
	if ran {
		return fmt.Errorf("%s: %w", r, registry.ErrAlreadyRunning)
	}
	defer r.metrics.Unregister()
	start := time.Now()
	r.store.MarkSynced()
	r.metrics.Synced(time.Since(start))
	<-ctx.Done()
	return nil
}

// AddService adds services, replacing any with the same key (namespace
// and hostname). Each is stored as a copy with the registry's provider,
// and with VIPs listed under the empty cluster moved to the registry's
// cluster. Replacing a service with an equal one publishes nothing.
func (r *Registry) AddService(svcs ...*model.Service) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	for _, svc := range svcs {
		r.store.UpsertService(r.adoptService(svc))
	}
}

// UpdateService applies change to a copy of the service with the key and
// stores the result, as AddService does. It returns an error wrapping
// ErrNotFound when there is no such service.
func (r *Registry) UpdateService(key model.ServiceKey, change func(*model.Service)) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	cur := r.store.ServiceByKey(key)
	if cur == nil {
		return fmt.Errorf("%s: update service %s: %w", r, key, ErrNotFound)
	}
	next := cur.DeepCopy()
	change(next)
	if next.Key() != key {
		return fmt.Errorf("%s: update service %s: the change moved it to %s", r, key, next.Key())
	}
	r.store.UpsertService(r.adoptService(next))
	return nil
}

// DeleteService removes the service with the key, if there is one. Its
// endpoints are withdrawn (an empty endpoints event) before the delete,
// and kept: they come back if the service does.
func (r *Registry) DeleteService(key model.ServiceKey) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.DeleteService(key)
}

// SetEndpoints replaces the endpoints of the service with the key; none
// clears them. The service need not exist yet: endpoints wait for it, as
// a real registry's do. Endpoints are stored as copies, with the
// registry's cluster when they have none.
func (r *Registry) SetEndpoints(key model.ServiceKey, eps ...*model.Endpoint) {
	list := make([]*model.Endpoint, len(eps))
	for i, ep := range eps {
		c := ep.DeepCopy()
		if c.Cluster == "" {
			c.Cluster = r.opts.ClusterID
		}
		list[i] = c
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.SetEndpoints(r.shard, key, list)
}

// AddWorkload adds workload instances (Pods or WorkloadEntries),
// replacing any with the same key. Each is stored as a copy, with the
// registry's cluster when it has none.
func (r *Registry) AddWorkload(ws ...*model.WorkloadInstance) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	for _, w := range ws {
		c := w.DeepCopy()
		if c.Endpoint.Cluster == "" {
			c.Endpoint.Cluster = r.opts.ClusterID
		}
		r.store.UpsertWorkload(c)
	}
}

// DeleteWorkload removes the workload instance with the key, if there is
// one. A key with no cluster means the registry's cluster.
func (r *Registry) DeleteWorkload(key model.WorkloadKey) {
	if key.Cluster == "" {
		key.Cluster = r.opts.ClusterID
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.DeleteWorkload(key)
}

// SetNetworkGateways replaces the registry's network gateways, as a kube
// registry's change when gateway Services come and go. Each is stored with
// the registry's cluster when it has none; the list is sorted and
// deduplicated (model.SortGateways).
func (r *Registry) SetNetworkGateways(gws ...model.NetworkGateway) {
	list := slices.Clone(gws)
	for i := range list {
		if list[i].Cluster == "" {
			list[i].Cluster = r.opts.ClusterID
		}
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.store.SetNetworkGateways(model.SortGateways(list))
}

// AddDiagnostic adds diagnostics, as a real registry reports what it
// refused or could not fully use.
func (r *Registry) AddDiagnostic(ds ...model.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.diags = append(slices.Clone(r.diags), ds...)
	r.store.SetDiagnostics(diagnosticsOwner, r.diags)
}

// ClearDiagnostics removes every diagnostic.
func (r *Registry) ClearDiagnostics() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.diags = nil
	r.store.SetDiagnostics(diagnosticsOwner, nil)
}

func (r *Registry) adoptService(svc *model.Service) *model.Service {
	c := svc.DeepCopy()
	c.Provider = r.opts.Provider
	c.Clusters = []model.ClusterID{r.opts.ClusterID}
	if vips, ok := c.Addresses[""]; ok {
		delete(c.Addresses, "")
		c.Addresses[r.opts.ClusterID] = append(c.Addresses[r.opts.ClusterID], vips...)
	}
	if addrs, ok := c.ExternalAddresses[""]; ok {
		delete(c.ExternalAddresses, "")
		c.ExternalAddresses[r.opts.ClusterID] = append(c.ExternalAddresses[r.opts.ClusterID], addrs...)
	}
	return c
}
