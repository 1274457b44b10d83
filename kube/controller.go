package kube

import (
	"context"
	"errors"
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
// Every informer event, and every HandleWorkload call, updates the
// controller's objects and converts what it changed while holding mu, so
// each conversion sees one consistent view of the cluster and the store
// receives changes in the order they were made. The store never calls a
// handler synchronously (each subscription has its own queue), so holding
// mu while writing to it cannot deadlock with a handler that queries the
// controller.
type Controller struct {
	store.Reader

	opts  Options
	log   *slog.Logger
	store *store.Store
	// nsSel selects namespaces; nil selects all.
	nsSel labels.Selector

	informers []informer
	started   atomic.Bool

	// mu guards objs (with the memos in its pods), dirty, primed, net,
	// portMaps, svcMemo, scratch and recomputed.
	mu   sync.Mutex
	objs *objects
	// dirty holds what must be converted again at the next flush.
	dirty dirtySet
	// primed is set once the informers have delivered their initial
	// lists; until then changes accumulate in dirty, and are converted
	// all at once.
	primed bool
	// net decides networks; its cluster network follows the system
	// namespace's label when Options.Network is "".
	net networkEnv
	// portMaps interns the port maps of the workloads memoized in the
	// pods (see Controller.podWorkload).
	portMaps portMaps
	// svcMemo memoizes each service's conversion; see
	// Controller.convertService.
	svcMemo map[types.NamespacedName]svcMemoEntry
	// scratch holds the buffers of one service's endpoint computation,
	// reused by the next: see Controller.serviceEndpoints.
	scratch endpointScratch
	// recomputed counts the services recomputed (syncService) once
	// primed: tests tell a patch from a recomputation by it.
	recomputed int
}

var _ registry.Registry = (*Controller)(nil)

// New returns a controller over the cluster that client talks to. It
// builds its informers, with transforms and handlers, but starts nothing:
// call Run.
func New(client kubernetes.Interface, opts Options) (*Controller, error) {
	if client == nil {
		return nil, errors.New("kube: nil client")
	}
	opts = opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	sel, err := opts.namespaceSelector()
	if err != nil {
		return nil, err
	}
	st := store.New(model.ShardKey{Provider: model.Kubernetes, Cluster: opts.ClusterID})
	c := &Controller{
		Reader:  st,
		opts:    opts,
		log:     opts.Logger.With("cluster", string(opts.ClusterID)),
		store:   st,
		nsSel:   sel,
		objs:    newObjects(),
		svcMemo: map[types.NamespacedName]svcMemoEntry{},
		dirty:   newDirtySet(),
		net:     networkEnv{cluster: opts.Network, ranges: newNetworkRanges(opts.NetworkCIDRs)},
	}
	c.informers = c.newInformers(client)
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
// returns an error.
func (c *Controller) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("kube: controller already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	wait := runInformers(ctx, c.informers)
	defer func() { cancel(); wait() }()
	if !c.waitSynced(ctx) {
		return nil // ctx ended first
	}
	c.mu.Lock()
	n := c.primeLocked()
	c.store.MarkSynced()
	c.objs.indexDeps() // before any change is handled
	c.mu.Unlock()
	c.log.Info("initial state converted", "conversions", n)
	<-ctx.Done()
	return nil
}

// HandleWorkload takes in a WorkloadEntry instance from outside (the
// serviceentry controller, wired by the aggregate), so that this
// cluster's Services can select it. Only events of kind
// model.KindWorkloadEntry matter; others are ignored. A ClientSideLB
// Service selects an entry of its own namespace whose labels match its
// selector; the entry's endpoints join the Service's endpoints in this
// cluster's shard, beside any slice endpoint at the same address. Safe
// for concurrent use, before or during Run.
func (c *Controller) HandleWorkload(ev registry.WorkloadEvent) {
	w := ev.Workload()
	if w == nil || w.Kind != model.KindWorkloadEntry {
		return
	}
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	cur := ev.Current
	if ev.Type == model.EventDelete {
		cur = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.objs.setEntry(key, cur)
	for name := range c.objs.servicesByNS[key.Namespace] {
		svcKey := types.NamespacedName{Namespace: key.Namespace, Name: name}
		sel := c.objs.services[svcKey].Spec.Selector
		if (old != nil && len(sel) > 0 && model.SelectorMatches(sel, old.Endpoint.Labels)) ||
			(cur != nil && len(sel) > 0 && model.SelectorMatches(sel, cur.Endpoint.Labels)) {
			c.markService(svcKey)
		}
	}
	c.flushLocked()
}

// handle adapts a typed change function to an informer event handler:
// set receives the object's key and the object, or nil on delete.
// Tombstones are unwrapped; objects of other types are ignored.
func handle[T interface {
	*corev1.Service | *sliceInfo | *podInfo | *corev1.Node | *corev1.Namespace
	GetNamespace() string
	GetName() string
}](c *Controller, set func(key types.NamespacedName, obj T)) cache.ResourceEventHandler {
	apply := func(obj any, deleted bool) {
		o, ok := unwrap[T](obj)
		if !ok {
			return
		}
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		if deleted {
			var none T
			o = none
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		set(key, o)
		c.flushLocked()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { apply(obj, false) },
		UpdateFunc: func(_, obj any) { apply(obj, false) },
		DeleteFunc: func(obj any) { apply(obj, true) },
	}
}

// syncPoll is how often Run checks whether the informers have delivered
// their lists. client-go's WaitForCacheSync checks every 100ms, which
// would add up to a tenth of a second to every start.
const syncPoll = 5 * time.Millisecond

// waitSynced waits until every informer has delivered its list, or ctx
// ends (false). When the services' and the slices' lists are in while
// another is not (in a large cluster the pods' list, which takes the
// longest), it does once what of the initial conversion needs neither
// pods nor nodes (prepareLocked), beside the lists still coming rather
// than after them.
func (c *Controller) waitSynced(ctx context.Context) bool {
	synced := func(name string) bool {
		i := slices.IndexFunc(c.informers, func(in informer) bool { return in.name == name })
		return i >= 0 && c.informers[i].ctrl.HasSynced()
	}
	prepared := false
	t := time.NewTicker(syncPoll)
	defer t.Stop()
	for {
		if !slices.ContainsFunc(c.informers, func(in informer) bool { return !in.ctrl.HasSynced() }) {
			return true
		}
		if !prepared && synced(servicesInformer) && synced(endpointSlicesInformer) {
			prepared = true
			c.mu.Lock()
			c.prepareLocked()
			c.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
