package kube

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/watchlist"
)

// informer watches one kind of object for the controller: an informer of
// its own (ctrl), or one it shares with its caller (Options.Informers).
//
// Its own is client-go's plain informer (cache.NewInformerWithOptions),
// not a shared one: the controller is the only consumer of its
// informers, so the shared informer's fan-out (two goroutines and a
// growing buffer per handler, between the queue and the handler) would
// only add a goroutine handoff to every event and hold every
// notification of the initial list until the handler took it. Here the
// handler runs on the goroutine that pops the queue, and the informer's
// transform keeps only what the controller reads.
type informer struct {
	name string
	// ctrl is the controller's own informer, which Run runs, and store
	// its cache; nil for a shared one.
	ctrl  cache.Controller
	store cache.Store
	// shared is the caller's informer, to which Run adds handler and
	// from which it removes it when it returns; reg is that
	// registration, while Run runs.
	shared  SharedInformer
	handler cache.ResourceEventHandler
	reg     cache.ResourceEventHandlerRegistration
}

// synced reports whether the informer has delivered its initial list to
// the controller's handler: for a shared informer, the handler's own
// registration says so, not the informer, which may have synced long
// before the handler was added.
func (in *informer) synced() bool {
	if in.ctrl != nil {
		return in.ctrl.HasSynced()
	}
	return in.reg != nil && in.reg.HasSynced()
}

// syncedChecker is synced as a channel.
func (in *informer) syncedChecker() cache.DoneChecker {
	if in.ctrl != nil {
		return in.ctrl.HasSyncedChecker()
	}
	return in.reg.HasSyncedChecker()
}

// newInformer returns an informer of the objects lw lists, each passed
// through transform before it is stored and handed to handler.
func newInformer(name string, lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, transform cache.TransformFunc, handler cache.ResourceEventHandler) informer {
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    obj,
		Handler:       handler,
		ResyncPeriod:  resync,
		Transform:     transform,
	})
	return informer{name: name, ctrl: ctrl, store: store}
}

// addHandlers adds the controller's handler to every shared informer.
// An informer that refuses it (a stopped one) is an error, and the
// handlers added before it are removed.
func addHandlers(infs []informer) error {
	for i := range infs {
		in := &infs[i]
		if in.shared == nil {
			continue
		}
		reg, err := in.shared.AddEventHandler(in.handler)
		if err != nil {
			removeHandlers(infs)
			return fmt.Errorf("kube: adding the controller's handler to the shared %s informer: %w", in.name, err)
		}
		in.reg = reg
	}
	return nil
}

// removeHandlers removes the controller's handler from every shared
// informer it was added to.
func removeHandlers(infs []informer) {
	for i := range infs {
		if in := &infs[i]; in.reg != nil {
			// Only a stopped informer refuses, and it calls no handler.
			_ = in.shared.RemoveEventHandler(in.reg)
			in.reg = nil
		}
	}
}

// runInformers runs every informer of the controller's own until ctx is
// done, and calls listed when each informer (shared ones too, their
// handlers added) has delivered its initial list to the controller's
// handler: client-go closes a HasSyncedChecker channel then, so nobody
// polls. wait waits for the goroutines to end, once ctx is done.
func runInformers(ctx context.Context, infs []informer, listed func()) (wait func()) {
	var wg sync.WaitGroup
	for i := range infs {
		in := &infs[i]
		if in.ctrl != nil {
			wg.Go(func() { in.ctrl.RunWithContext(ctx) })
		}
		checker := in.syncedChecker()
		wg.Go(func() {
			select {
			case <-checker.Done():
				listed()
			case <-ctx.Done():
			}
		})
	}
	return wg.Wait
}

// listWatch returns the ListerWatcher of one resource of client (a
// kubernetes.Interface, or another generated clientset), which streams
// its initial list (client-go's watch-list protocol) unless client
// cannot: a fake clientset lists (internal/watchlist).
//
// lists is called for each list the informer makes: a List call, or a
// watch that starts with the initial state (a watch list); the first is
// its initial list, any later one a relist.
func listWatch[L runtime.Object](client any, list func(context.Context, metav1.ListOptions) (L, error), watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), lists func()) cache.ListerWatcher {
	return watchlist.ListerWatcher(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			lists()
			return list(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				lists()
			}
			return watchFn(ctx, opts)
		},
	}, client)
}

// relists returns the lists function of an informer's listWatch: it
// counts every list after the first in the controller's metrics.
func (c *Controller) relists(informer string) func() {
	var n atomic.Int64
	return func() {
		if n.Add(1) > 1 {
			c.metrics.Relisted(informer)
		}
	}
}

// The informers' names, by which step finds the lists it prepares the
// initial conversion from.
const (
	servicesInformer       = "services"
	endpointSlicesInformer = "endpointslices"
	podsInformer           = "pods"
	nodesInformer          = "nodes"
	namespacesInformer     = "namespaces"
)

// kind is what the controller reads of one of the five kinds its own or
// shared informers watch: the informer's name, the transform into the
// controller's lean type, and the handler of the lean objects.
type kind struct {
	name    string
	strip   cache.TransformFunc
	handler cache.ResourceEventHandler
}

// kinds returns the five kinds, services first.
func (c *Controller) kinds() []kind {
	return []kind{
		{servicesInformer, stripService, handle(c, func(ch *changes) map[types.NamespacedName]*corev1.Service { return ch.services }, func(ch *changes) *[]*corev1.Service { return &ch.listedServices })},
		{endpointSlicesInformer, stripSlice, handle(c, func(ch *changes) map[types.NamespacedName]*sliceInfo { return ch.slices }, nil)},
		{podsInformer, stripPods(c.podLabels), handle(c, func(ch *changes) map[types.NamespacedName]*podInfo { return ch.pods }, func(ch *changes) *[]*podInfo { return &ch.listedPods })},
		{nodesInformer, stripNode, handle(c, func(ch *changes) map[types.NamespacedName]*corev1.Node { return ch.nodes }, nil)},
		{namespacesInformer, stripNamespace, handle(c, func(ch *changes) map[types.NamespacedName]*corev1.Namespace { return ch.namespaces }, nil)},
	}
}

// newInformers returns the controller's five informers over client.
func (c *Controller) newInformers(client kubernetes.Interface) []informer {
	core, disc := client.CoreV1(), client.DiscoveryV1()
	watched := map[string]struct {
		lw  cache.ListerWatcher
		obj runtime.Object
	}{
		servicesInformer:       {listWatch(client, core.Services("").List, core.Services("").Watch, c.relists(servicesInformer)), &corev1.Service{}},
		endpointSlicesInformer: {listWatch(client, disc.EndpointSlices("").List, disc.EndpointSlices("").Watch, c.relists(endpointSlicesInformer)), &discoveryv1.EndpointSlice{}},
		podsInformer:           {listWatch(client, core.Pods("").List, core.Pods("").Watch, c.relists(podsInformer)), &corev1.Pod{}},
		nodesInformer:          {listWatch(client, core.Nodes().List, core.Nodes().Watch, c.relists(nodesInformer)), &corev1.Node{}},
		namespacesInformer:     {listWatch(client, core.Namespaces().List, core.Namespaces().Watch, c.relists(namespacesInformer)), &corev1.Namespace{}},
	}
	var out []informer
	for _, k := range c.kinds() {
		w := watched[k.name]
		out = append(out, newInformer(k.name, w.lw, w.obj, c.opts.ResyncPeriod, k.strip, k.handler))
	}
	return out
}
