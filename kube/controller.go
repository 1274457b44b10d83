package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/intern"
	"github.com/meshreg/meshreg/internal/metrics"
	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Controller is the registry of one Kubernetes cluster. Create it with
// New, start it with Run. Its queries and Subscribe are those of
// registry.Discovery and registry.Controller; they are safe for concurrent
// use at any time, and answer from an empty registry until Run has
// converted the initial state.
//
// # Concurrency
//
// One goroutine, Run's, does all the controller's work: the informers'
// handlers and HandleWorkload only record the objects that changed in an
// inbox and wake it. It applies what changed to its view of the cluster,
// converts what that affects, and writes the results to the store, which
// publishes them (each subscription has its own queue, so no handler runs
// on this goroutine).
type Controller struct {
	opts  Options
	log   *slog.Logger
	store *store.Store
	// shard is the controller's: Kubernetes in its cluster; clusters
	// is its cluster as every service's model.Service.Clusters.
	shard    model.ShardKey
	clusters []model.ClusterID
	// nsSel selects namespaces; nil selects all.
	nsSel labels.Selector
	// podLabels interns the pods' label maps (see stripPods).
	podLabels *intern.Maps

	// metrics is nil unless Options.Metrics is set.
	metrics *metrics.Registry

	informers []informer
	// listing is the informers whose initial lists the initial sync
	// waits for, set by Run once their handlers are added; PendingSync
	// reads it from any goroutine.
	listing atomic.Pointer[[]informer]
	started atomic.Bool
	in      *inbox
	// network is the cluster's network as the worker last decided it,
	// for Network.
	network atomic.Pointer[model.NetworkID]

	// What follows is the worker's alone.

	cl *cluster
	// dirty holds what must be converted again at the next flush.
	dirty dirtySet
	// primed is set once the informers have delivered their initial
	// lists and those are converted; prepared once the services' and
	// slices' lists are in and the services converted (see prepare).
	primed, prepared bool
	// net decides networks; its cluster network follows the system
	// namespace's label when Options.Network is "".
	net networkEnv
	// mesh is the mesh networks (SetMeshNetworks); meshGateways the
	// gateways they give the Services they name, by Service.
	mesh         *model.MeshNetworks
	meshGateways map[types.NamespacedName][]model.NetworkGateway
	// portMaps interns the port maps of the workloads memoized in the
	// pods (see Controller.podWorkload).
	portMaps portMaps
	// podMemos holds each pod's memoized workload (podmeta.go).
	podMemos map[*podInfo]podMemo
	// svcs holds per service its conversion and endpoint memo.
	svcs map[types.NamespacedName]*svcState
	// pendingBy holds, per service, how many of its endpoints the
	// diagnostics written last withhold until their pod is known;
	// pending is their total, which the metrics read (setPending).
	pendingBy map[types.NamespacedName]int
	pending   atomic.Int64
	// work is the memory of the worker's endpoint computations.
	work endpointWork
	// spare is the emptied changes the inbox takes in turn.
	spare changes
	// listed holds, until the initial conversion, the services and pods
	// of the informers' initial lists in the order they came.
	listed struct {
		services []*corev1.Service
		pods     []*podInfo
	}
	// runStart is when Run started, for the initial sync's metric.
	runStart time.Time
}

var (
	_ registry.Registry            = (*Controller)(nil)
	_ registry.GatewayDiscovery    = (*Controller)(nil)
	_ registry.WorkloadHandler     = (*Controller)(nil)
	_ registry.Settler             = (*Controller)(nil)
	_ registry.MeshNetworksHandler = (*Controller)(nil)
	_ registry.SyncReporter        = (*Controller)(nil)
)

// New returns a controller over the cluster that client talks to. It
// builds its informers, with transforms and handlers, but starts nothing:
// call Run.
func New(client kubernetes.Interface, opts Options) (*Controller, error) {
	opts = opts.defaults()
	if client == nil && opts.Informers == nil {
		return nil, errors.New("kube: nil client, and no Options.Informers")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	sel, err := opts.namespaceSelector()
	if err != nil {
		return nil, err
	}
	st := store.New()
	m, err := metrics.New(opts.Metrics, model.Kubernetes.String(), opts.ClusterID)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	if m != nil {
		st.Observe(m)
	}
	c := &Controller{
		metrics:   m,
		opts:      opts,
		log:       opts.Logger.With("cluster", string(opts.ClusterID)),
		store:     st,
		shard:     model.ShardKey{Provider: model.Kubernetes, Cluster: opts.ClusterID},
		clusters:  []model.ClusterID{opts.ClusterID},
		nsSel:     sel,
		podLabels: intern.NewMaps(),
		in:        newInbox(),
		cl:        newCluster(),
		dirty:     newDirtySet(),
		net:       networkEnv{cluster: opts.Network, ranges: newNetworkRanges(opts.NetworkCIDRs)},
		svcs:      map[types.NamespacedName]*svcState{},
		podMemos:  map[*podInfo]podMemo{},
		pendingBy: map[types.NamespacedName]int{},
		spare:     newChanges(),
	}
	c.network.Store(&c.net.cluster)
	if opts.Informers != nil {
		c.informers = c.sharedInformers(opts.Informers)
	} else {
		c.informers = c.newInformers(client)
	}
	m.Watch(metrics.State{Discovery: c, QueueDepths: st.QueueDepths, Pending: c.pendingEndpoints, SyncPending: c.PendingSync})
	return c, nil
}

// Provider returns model.Kubernetes.
func (c *Controller) Provider() model.Provider { return model.Kubernetes }

// Cluster returns the cluster ID.
func (c *Controller) Cluster() model.ClusterID { return c.opts.ClusterID }

// Run starts the informers, converts the initial state once they have
// delivered their lists, marks the registry synced, and then converts
// every change until ctx is done. It then stops the informers, waits for
// their goroutines, and returns nil. A controller runs once: a second call
// returns an error wrapping registry.ErrAlreadyRunning.
func (c *Controller) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return fmt.Errorf("kube: controller of cluster %s: %w", c.opts.ClusterID, registry.ErrAlreadyRunning)
	}
	defer c.metrics.Unregister()
	c.runStart = time.Now()
	if gc := c.opts.GatewayClient; gc != nil {
		served, classes, err := gatewayAPIServed(gc)
		switch {
		case err != nil:
			c.log.Error("could not look for the Gateway API; no network gateways from it", "err", err)
			c.store.SetDiagnostics(gatewayAPIDiagnosticsOwner, []model.Diagnostic{{
				Severity: model.Warning, Kind: "Gateway", Cluster: c.opts.ClusterID,
				Message: fmt.Sprintf("could not look for the Gateway API (%v); Gateways are not read", err),
			}})
		case served:
			c.informers = append(c.informers, c.newGatewayInformer(gc))
			if classes {
				c.informers = append(c.informers, c.newGatewayClassInformer(gc))
			}
		default:
			c.log.Info("the cluster does not serve " + gatewayAPIGroupVersion + " Gateways; no network gateways from the Gateway API")
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	mcs := &mcsRunner{c: c, ctx: ctx}
	var lookAgain <-chan time.Time
	if c.opts.MCS.ServiceDiscovery {
		// Before the informers start, so that the initial conversion
		// waits for the MCS lists when the cluster serves them.
		infs, retry := c.startMCS(true)
		c.informers = append(c.informers, infs...)
		if retry {
			t := time.NewTicker(c.opts.MCS.CheckInterval)
			defer t.Stop()
			lookAgain = t.C
		}
	}
	if err := addHandlers(c.informers); err != nil {
		cancel()
		return err
	}
	listing := slices.Clone(c.informers)
	c.listing.Store(&listing)
	var reporting sync.WaitGroup
	c.reportSync(ctx, &reporting)
	wait := runInformers(ctx, c.informers, c.wake)
	defer func() { cancel(); wait(); mcs.wait(); reporting.Wait(); removeHandlers(c.informers) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.in.Wake():
		case <-lookAgain:
			if !mcs.look() {
				lookAgain = nil
			}
		}
		c.step()
	}
}

// wake wakes Run's goroutine with nothing to apply: an informer has
// delivered its initial list, which step looks at.
func (c *Controller) wake() { c.in.Add(func(*changes) {}) }

// step applies what the inbox holds and converts what it affects; until
// the informers have delivered their lists it only applies them, and
// converts the initial state once they have (see prime).
func (c *Controller) step() {
	synced := !c.primed && c.informersSynced()
	ch := c.in.Take(c.spare)
	defer c.in.Done()
	c.apply(ch)
	c.spare = emptied(ch)
	switch {
	case synced:
		n := c.prime()
		c.store.MarkSynced()
		c.metrics.Synced(time.Since(c.runStart))
		c.log.Info("initial state converted", "conversions", n)
	case c.primed:
		c.flush()
	case !c.prepared && c.informerSynced(servicesInformer) && c.informerSynced(endpointSlicesInformer):
		c.prepare()
	}
}

// informersSynced reports whether every informer has delivered its list
// (to its handler, so the list is in the inbox or applied).
func (c *Controller) informersSynced() bool {
	return !slices.ContainsFunc(c.informers, func(in informer) bool { return !in.synced() })
}

// informerSynced reports whether the named informer has delivered its
// list.
func (c *Controller) informerSynced(name string) bool {
	i := slices.IndexFunc(c.informers, func(in informer) bool { return in.name == name })
	return i >= 0 && c.informers[i].synced()
}

// Settled reports whether every change received so far is applied and
// its events delivered to the subscribers. The aggregate waits for it
// before it reports synced, so that WorkloadEntries handed in through
// HandleWorkload are in.
func (c *Controller) Settled() bool { return c.in.Idle() && c.store.Idle() }

// Network returns the cluster's network: Options.Network, else the
// topology.istio.io/network label of the system namespace, else the mesh
// networks' network whose endpoints come from this cluster's registry
// (SetMeshNetworks); "" when none is set. The controller's Services select another cluster's
// WorkloadEntry only when the entry is on no network or on this one.
func (c *Controller) Network() model.NetworkID { return *c.network.Load() }

// HandleWorkload takes in a WorkloadEntry instance from outside (the
// serviceentry controller, wired by the aggregate), so that this
// cluster's Services can select it. Only events of kind
// model.KindWorkloadEntry matter; others are ignored. A ClientSideLB
// Service selects an entry of its own namespace whose labels match its
// selector; the entry's endpoints join the Service's endpoints in this
// cluster's shard, beside any slice endpoint at the same address. Safe
// for concurrent use, before or during Run; it never waits for the
// controller's work.
func (c *Controller) HandleWorkload(ev registry.WorkloadEvent) {
	w := ev.Workload()
	if w == nil || w.Kind != model.KindWorkloadEntry {
		return
	}
	key := w.Key() // by cluster too: entries of two clusters may share a name
	cur := ev.Current
	if ev.Type == model.EventDelete {
		cur = nil
	}
	c.in.Add(func(ch *changes) { ch.entries[key] = cur })
}

// handle adapts an informer's events of one kind to the inbox: pending
// receives the inbox's map of that kind, into which the object's key is
// put with the object, or nil on delete. When listed is not nil, it
// receives the inbox's list of that kind's objects of the initial list,
// to which each such object is appended as it comes. Tombstones are
// unwrapped; objects of other types are ignored.
func handle[T interface {
	*corev1.Service | *sliceInfo | *podInfo | *corev1.Node | *corev1.Namespace | *gatewayInfo | *gatewayClassInfo | *exportInfo | *importInfo
	GetNamespace() string
	GetName() string
}](c *Controller, pending func(ch *changes) map[types.NamespacedName]T, listed func(ch *changes) *[]T) cache.ResourceEventHandler {
	put := func(obj any, deleted, initial bool) {
		o, ok := unwrap[T](obj)
		if !ok {
			return
		}
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		if deleted {
			var none T
			o = none
		}
		c.in.Add(func(ch *changes) {
			pending(ch)[key] = o
			if initial && listed != nil {
				l := listed(ch)
				*l = append(*l, o)
			}
		})
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { put(obj, false, initial) },
		UpdateFunc: func(_, obj any) { put(obj, false, false) },
		DeleteFunc: func(obj any) { put(obj, true, false) },
	}
}
