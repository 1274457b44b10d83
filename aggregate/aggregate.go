package aggregate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/internal/metrics"
	"github.com/meshreg/meshreg/internal/syncreport"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// ErrDuplicate is returned by Add for a registry whose provider and
// cluster are already present.
var ErrDuplicate = errors.New("a registry for this provider and cluster is already present")

// ErrNotFound is returned by Remove for a provider and cluster with no
// registry.
var ErrNotFound = errors.New("no registry for this provider and cluster")

// ErrInvalidOptions is wrapped by New's error for options it cannot use:
// invalid mesh networks, a metrics Registerer that refuses the metrics.
var ErrInvalidOptions = errors.New("invalid options")

// ErrNilRegistry is returned by Add and Replace for a nil registry.
var ErrNilRegistry = errors.New("nil registry")

// Controller merges many registries, of both providers and any number of
// clusters, into one registry: it answers every registry.Discovery query
// over the merged state and publishes the merged state's events.
//
// Services with the same namespace and hostname are one service: a
// Kubernetes Service takes precedence over ServiceEntries for the same
// key, in every query and event (ARCHITECTURE.md decision 1); the same Kubernetes
// Service in several clusters is one service with each cluster's VIPs.
// Endpoints stay per shard (provider, cluster).
//
// Registries are added, replaced and removed at any time, before or while
// the aggregate runs. The aggregate runs its registries: Run starts them,
// Add starts a registry added while running, Remove stops it.
//
// A Controller is safe for concurrent use.
type Controller struct {
	opts Options
	// mesh is Options.MeshNetworks.
	mesh *model.MeshNetworks
	// global merges every registry; its store answers the queries.
	global *merger

	// mu guards the fields below. It is taken before any merger's mu,
	// never after.
	mu      sync.Mutex
	members map[model.ShardKey]*member
	// pending holds replacements waiting to sync before they take over.
	pending map[model.ShardKey]*member
	// scoped holds a merger per cluster that has cluster-scoped
	// subscribers.
	scoped map[model.ClusterID]*merger
	runCtx context.Context // set while running
	ran    bool
	marked bool // the global store was marked synced
	// settleRetry, while set, will look at the first sync again (see
	// markIfReady).
	settleRetry *time.Timer
	// metrics is nil unless Options.Metrics is set; started is when Run
	// started, for the initial sync's metric.
	metrics *metrics.Registry
	started time.Time
	wg      sync.WaitGroup

	// sinks are the members that take other registries' workloads, read
	// while forwarding without c.mu.
	sinks atomic.Pointer[[]*member]
	// handed counts the workload events handed to sinks; HasSynced
	// checks it did not move while it looked.
	handed atomic.Uint64
}

// member is one registry in the aggregate.
type member struct {
	reg   registry.Registry
	shard model.ShardKey
	// unsubs undo the member's subscriptions.
	unsubs []func()
	// detached is set, under each merger's mu, once the member is
	// removed: events still in flight are then dropped.
	detached atomic.Bool
	// synced is set when the member's SyncedEvent reaches the global
	// merger, which then holds its initial state.
	synced atomic.Bool

	// Set by start. timeout, with Options.SyncTimeout, looks at the
	// aggregate's first sync again when the member's time is up.
	cancel  context.CancelFunc
	done    chan struct{}
	started time.Time
	timeout *time.Timer
}

// New returns an empty aggregate. Invalid mesh networks and a metrics
// Registerer that refuses the aggregate's metrics are errors wrapping
// ErrInvalidOptions.
func New(opts Options) (*Controller, error) {
	opts = opts.defaults()
	if opts.SyncReportInterval < 0 {
		return nil, fmt.Errorf("aggregate: negative SyncReportInterval %v: %w", opts.SyncReportInterval, ErrInvalidOptions)
	}
	if err := validateMeshNetworks(opts.MeshNetworks); err != nil {
		return nil, fmt.Errorf("aggregate: mesh networks: %w: %w", ErrInvalidOptions, err)
	}
	c := &Controller{
		opts:    opts,
		mesh:    opts.MeshNetworks,
		global:  newMerger(opts.MeshNetworks.AddressGateways()),
		members: map[model.ShardKey]*member{},
		pending: map[model.ShardKey]*member{},
		scoped:  map[model.ClusterID]*merger{},
	}
	m, err := c.newMetrics()
	if err != nil {
		return nil, fmt.Errorf("aggregate: metrics: %w: %w", ErrInvalidOptions, err)
	}
	c.metrics = m
	return c, nil
}

// The aggregate is a Reader and runs like a registry; it has no provider
// or cluster of its own, so it is not a Registry.
var (
	_ registry.Reader            = (*Controller)(nil)
	_ registry.Controller        = (*Controller)(nil)
	_ registry.GatewayDiscovery  = (*Controller)(nil)
	_ registry.MetadataDiscovery = (*Controller)(nil)
	_ registry.Settler           = (*Controller)(nil)
	_ registry.SyncReporter      = (*Controller)(nil)
)

func shardOf(r registry.Registry) model.ShardKey {
	return model.ShardKey{Provider: r.Provider(), Cluster: r.Cluster()}
}

// Add adds a registry, and starts it if the aggregate is running. A
// registry for the same provider and cluster must not be present
// (ErrDuplicate): use Replace to swap one.
func (c *Controller) Add(r registry.Registry) error {
	if r == nil {
		return fmt.Errorf("aggregate: add: %w", ErrNilRegistry)
	}
	shard := shardOf(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.members[shard] != nil {
		return fmt.Errorf("aggregate: add %s: %w", shard, ErrDuplicate)
	}
	m := c.attach(r)
	c.members[shard] = m
	c.opts.Logger.Info("registry added", "shard", shard.String())
	return nil
}

// Remove removes the registry of a provider and cluster: its handlers are
// detached, it is stopped, and its services, endpoints and workloads are
// deleted, which subscribers see as delete events.
func (c *Controller) Remove(provider model.Provider, cluster model.ClusterID) error {
	shard := model.ShardKey{Provider: provider, Cluster: cluster}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[shard]
	if m == nil {
		return fmt.Errorf("aggregate: remove %s: %w", shard, ErrNotFound)
	}
	if p := c.pending[shard]; p != nil {
		delete(c.pending, shard)
		c.retire(p)
	}
	delete(c.members, shard)
	c.retire(m)
	c.deleteShard(shard)
	c.opts.Logger.Info("registry removed", "shard", shard.String())
	return nil
}

// attach subscribes the mergers to r, registers it as a workload sink,
// and starts it if the aggregate runs. The caller holds c.mu.
func (c *Controller) attach(r registry.Registry) *member {
	m := &member{reg: r, shard: shardOf(r)}
	m.unsubs = append(m.unsubs, r.Subscribe(c.memberHandler(m, c.global, true)))
	if g := c.scoped[m.shard.Cluster]; g != nil {
		m.unsubs = append(m.unsubs, r.Subscribe(c.memberHandler(m, g, false)))
	}
	if sink, ok := r.(registry.WorkloadHandler); ok {
		c.addSink(m, sink)
	}
	if h, ok := r.(registry.MeshNetworksHandler); ok && c.mesh != nil {
		h.SetMeshNetworks(c.mesh)
	}
	if c.runCtx != nil {
		c.start(m)
	}
	return m
}

// retire detaches a member and stops it; its data stays until deleted.
// The caller holds c.mu.
func (c *Controller) retire(m *member) {
	for _, u := range m.unsubs {
		u()
	}
	c.removeSink(m)
	c.forMergers(m.shard.Cluster, func(g *merger, _ bool) { m.detached.Store(true) })
	if m.timeout != nil {
		m.timeout.Stop()
	}
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
}

// deleteShard deletes what a shard contributed from every merger. The
// caller holds c.mu.
func (c *Controller) deleteShard(shard model.ShardKey) {
	c.forMergers(shard.Cluster, func(g *merger, global bool) {
		deleted := g.removeShard(shard)
		if global {
			c.forwardDeletes(shard, deleted)
		}
	})
}

// forMergers calls f for the global merger and the cluster's scoped one,
// each under its lock. The caller holds c.mu.
func (c *Controller) forMergers(cluster model.ClusterID, f func(g *merger, global bool)) {
	for _, g := range []*merger{c.global, c.scoped[cluster]} {
		if g == nil {
			continue
		}
		g.mu.Lock()
		f(g, g == c.global)
		g.mu.Unlock()
	}
}

// memberHandler feeds m's events to a merger; the global merger's handler
// also forwards workloads to the sinks, in the same order, and takes m's
// SyncedEvent (see memberSynced).
func (c *Controller) memberHandler(m *member, g *merger, global bool) registry.Handler {
	apply := func(ev registry.Event) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if m.detached.Load() {
			return
		}
		g.apply(m.shard, ev)
		if we, ok := ev.(registry.WorkloadEvent); ok && global {
			c.forward(m, we)
		}
	}
	h := registry.HandlerFuncs{
		ServiceFunc:         func(e registry.ServiceEvent) { apply(e) },
		EndpointsFunc:       func(e registry.EndpointsEvent) { apply(e) },
		WorkloadFunc:        func(e registry.WorkloadEvent) { apply(e) },
		NetworkGatewaysFunc: func(e registry.NetworkGatewaysEvent) { apply(e) },
		ClusterFunc:         func(e registry.ClusterEvent) { apply(e) },
		NamespaceFunc:       func(e registry.NamespaceEvent) { apply(e) },
		GatewayFunc:         func(e registry.GatewayEvent) { apply(e) },
	}
	if global {
		h.SyncedFunc = func(registry.SyncedEvent) { c.memberSynced(m) }
	}
	return h
}

// memberSynced is told that m has synced, with its initial state in the
// global merger: a pending replacement takes over, and the aggregate's
// first sync may be complete.
func (c *Controller) memberSynced(m *member) {
	m.synced.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runCtx != nil && c.pending[m.shard] == m {
		c.promote(m.shard, m)
	}
	c.markIfReady()
}

// start runs m on the aggregate's context. The caller holds c.mu.
func (c *Controller) start(m *member) {
	ctx, cancel := context.WithCancel(c.runCtx)
	m.cancel = cancel
	m.done = make(chan struct{})
	m.started = time.Now()
	if c.opts.SyncTimeout > 0 {
		m.timeout = time.AfterFunc(c.opts.SyncTimeout, c.checkSync)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(m.done)
		if err := m.reg.Run(ctx); err != nil {
			c.opts.Logger.Error("registry stopped with an error", "shard", m.shard.String(), "err", err)
		}
	}()
}

// Run runs every registry until ctx is done, then stops them and returns.
// An aggregate runs once.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		return fmt.Errorf("aggregate: %w", registry.ErrAlreadyRunning)
	}
	c.ran = true
	c.runCtx = ctx
	c.started = time.Now()
	defer c.metrics.Unregister()
	for _, m := range c.allMembers() {
		c.start(m)
	}
	c.markIfReady() // with no members, or only synced ones
	c.wg.Go(func() { syncreport.Watch(ctx, c.opts.Logger, c.opts.SyncReportInterval, c.PendingSync) })
	c.mu.Unlock()

	<-ctx.Done()
	c.mu.Lock()
	c.runCtx = nil
	if c.settleRetry != nil {
		c.settleRetry.Stop()
		c.settleRetry = nil
	}
	for _, m := range c.allMembers() {
		if m.timeout != nil {
			m.timeout.Stop()
		}
	}
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// allMembers returns current and pending members in a stable order. The
// caller holds c.mu.
func (c *Controller) allMembers() []*member {
	out := make([]*member, 0, len(c.members)+len(c.pending))
	for _, m := range c.members {
		out = append(out, m)
	}
	for _, m := range c.pending {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *member) int { return a.shard.Compare(b.shard) })
	return out
}

// SubscribeCluster registers a handler for one cluster's events only: the
// merged state of that cluster's registries, as if they were the only ones
// in the aggregate. Like Subscribe, it first delivers the current state;
// removing the cluster's registries deletes their objects, which the
// handler sees.
func (c *Controller) SubscribeCluster(cluster model.ClusterID, h registry.Handler) (unsubscribe func()) {
	c.mu.Lock()
	g := c.scoped[cluster]
	if g == nil {
		g = newMerger(c.mesh.AddressGateways())
		g.st.MarkSynced()
		c.scoped[cluster] = g
		for _, m := range c.allMembers() {
			if m.shard.Cluster == cluster {
				m.unsubs = append(m.unsubs, m.reg.Subscribe(c.memberHandler(m, g, false)))
			}
		}
	}
	c.mu.Unlock()
	return g.st.Subscribe(h)
}

// Registries returns the registries in the aggregate (not those pending as
// replacements), ordered by provider and cluster.
func (c *Controller) Registries() []registry.Registry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []registry.Registry
	for _, m := range c.allMembers() {
		if c.members[m.shard] == m {
			out = append(out, m.reg)
		}
	}
	return out
}
