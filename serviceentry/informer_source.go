package serviceentry

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	"istio.io/client-go/pkg/clientset/versioned"
	listersv1 "istio.io/client-go/pkg/listers/networking/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/subs"
	"github.com/meshreg/meshreg/internal/watchlist"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// InformerOptions configure an InformerSource. The zero value watches
// every namespace without resync.
type InformerOptions struct {
	// Namespace limits the source to one namespace; "" watches all.
	Namespace string
	// ResyncPeriod is the informers' resync period; 0 never resyncs.
	ResyncPeriod time.Duration
	// Namespaces is a Kubernetes client of the same cluster, whose
	// Namespaces the source then watches (their labels only), so that a
	// Controller can apply its NamespaceSelector. Default nil: the source
	// holds no namespaces, and a Controller with a NamespaceSelector
	// refuses it.
	Namespaces kubernetes.Interface
	// WorkloadEntriesOnly watches the WorkloadEntries alone, for a
	// Controller with Options.WorkloadEntriesOnly (a remote cluster's
	// registry, which reads no ServiceEntries): no ServiceEntry informer
	// runs, and ServiceEntries returns none. Default false: both kinds.
	WorkloadEntriesOnly bool
	// CRDPollInterval, when positive, lets the source run on a cluster
	// without Istio's CRDs, as Istio's informers do (it cannot count on
	// them in remote clusters): Run first asks the cluster, through the
	// client's discovery, whether it serves networking.istio.io/v1
	// ServiceEntries and WorkloadEntries. A kind it serves is watched at
	// once; a kind it does not serve counts as synced with no objects,
	// and is asked for again every CRDPollInterval until it is served,
	// when its informer starts and its objects arrive as changes. When
	// the discovery request fails, the kind is watched all the same (it
	// syncs once the cluster serves it). Default 0: no discovery; every
	// kind is watched from the start, and the source syncs only once each
	// has listed, so that on a cluster without the CRDs it never syncs.
	CRDPollInterval time.Duration
}

// istioGroupVersion is the API group and version the source reads.
const istioGroupVersion = "networking.istio.io/v1"

// InformerSource is a Source over the networking.istio.io/v1
// ServiceEntries and WorkloadEntries of a cluster, read through istio
// client-go informers. The informers keep only what the registry reads
// (transform): metadata without managed fields, owner references or
// annotations (but the WorkloadEntry health-check one), the spec, of a
// ServiceEntry's status only its addresses (auto VIPs), and of a
// WorkloadEntry's status only its Healthy condition. Labels are kept
// (selectors, the auto-allocation opt-out).
//
// On a fake clientset (istio client-go's fake.NewSimpleClientset, or any
// other over client-go's object tracker) the informers list rather than
// stream their initial objects, which a fake cannot (client-go's
// watch-list protocol: see the package doc, "Testing on fake
// clientsets"), so the source syncs on a fake as it is.
type InformerSource struct {
	discovery discovery.DiscoveryInterface
	poll      time.Duration // InformerOptions.CRDPollInterval
	// crds are the informers of the Istio kinds: the WorkloadEntries', and
	// the ServiceEntries' unless InformerOptions.WorkloadEntriesOnly.
	crds     []*crdInformer
	seLister listersv1.ServiceEntryLister
	weLister listersv1.WorkloadEntryLister
	// nsInf watches the namespaces; nil without InformerOptions.Namespaces.
	nsInf cache.SharedIndexInformer

	// shared says that the informers are a control plane's
	// (NewSharedInformerSource): Run neither starts nor stops them.
	shared bool
	// kinds are the informers, each with the kind of its objects, to
	// which Run adds the source's handler; regs holds the registrations
	// while Run runs and after.
	kinds []kindInformer
	regs  atomic.Pointer[map[Kind]cache.ResourceEventHandlerRegistration]
	// synced is closed once every informer has listed (see
	// signalSynced).
	synced chan struct{}

	handlers subs.Set[func(Ref)]
	running  atomic.Bool
}

var (
	_ NamespaceSource = (*InformerSource)(nil)
	_ namespaceAware  = (*InformerSource)(nil)
)

// NewInformerSource returns a source over client. Informers start on Run.
func NewInformerSource(client versioned.Interface, opts InformerOptions) (*InformerSource, error) {
	if opts.CRDPollInterval < 0 {
		return nil, fmt.Errorf("serviceentry: negative CRDPollInterval %v", opts.CRDPollInterval)
	}
	ns := opts.Namespace
	ses := client.NetworkingV1().ServiceEntries(ns)
	wes := client.NetworkingV1().WorkloadEntries(ns)
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	seInf := cache.NewSharedIndexInformer(watchlist.ListerWatcher(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ses.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ses.Watch(ctx, o)
		},
	}, client), &networkingv1.ServiceEntry{}, opts.ResyncPeriod, indexers)
	weInf := cache.NewSharedIndexInformer(watchlist.ListerWatcher(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return wes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return wes.Watch(ctx, o)
		},
	}, client), &networkingv1.WorkloadEntry{}, opts.ResyncPeriod, indexers)
	s := &InformerSource{
		discovery: client.Discovery(),
		poll:      opts.CRDPollInterval,
		seLister:  listersv1.NewServiceEntryLister(seInf.GetIndexer()),
		weLister:  listersv1.NewWorkloadEntryLister(weInf.GetIndexer()),
		synced:    make(chan struct{}),
	}
	s.addCRD(KindWorkloadEntry, weInf)
	if !opts.WorkloadEntriesOnly {
		s.addCRD(KindServiceEntry, seInf)
	}
	if kc := opts.Namespaces; kc != nil {
		nss := kc.CoreV1().Namespaces()
		s.nsInf = cache.NewSharedIndexInformer(watchlist.ListerWatcher(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return nss.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return nss.Watch(ctx, o)
			},
		}, kc), &corev1.Namespace{}, opts.ResyncPeriod, cache.Indexers{})
		s.kinds = append(s.kinds, kindInformer{KindNamespace, s.nsInf})
	}
	for _, k := range s.kinds {
		if err := k.inf.SetTransform(strip); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *InformerSource) notify(kind Kind, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj) // unwraps tombstones
	if err != nil {
		return
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key) // a Namespace's key is its name
	if err != nil {
		return
	}
	for _, h := range s.handlers.All() {
		h(Ref{Kind: kind, Namespace: ns, Name: name})
	}
}

// Run adds the source's handlers to the informers and starts them (with
// InformerOptions.CRDPollInterval, those of the kinds the cluster serves,
// and the others once it serves them); when ctx is done it stops them,
// waits for their goroutines, and removes its handlers. The informers of
// a NewSharedInformerSource are their owner's to start and stop. A
// source runs once: a second call returns an error wrapping
// registry.ErrAlreadyRunning.
func (s *InformerSource) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("serviceentry: informer source: %w", registry.ErrAlreadyRunning)
	}
	if err := s.addHandlers(); err != nil {
		return err
	}
	defer s.removeHandlers(*s.regs.Load())
	var wg sync.WaitGroup
	defer wg.Wait()
	if s.shared {
		wg.Go(func() { s.signalSynced(ctx) })
		<-ctx.Done()
		return nil
	}
	if s.nsInf != nil {
		wg.Go(func() { s.nsInf.RunWithContext(ctx) })
	}
	if s.poll == 0 {
		for _, k := range s.crds {
			k.start(ctx, &wg)
		}
		wg.Go(func() { s.signalSynced(ctx) })
		return nil
	}
	waiting := s.startServed(ctx, &wg)
	wg.Go(func() { s.signalSynced(ctx) })
	if !waiting {
		return nil
	}
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for s.startServed(ctx, &wg) {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
	return nil
}

// NamespaceTrafficDistribution returns a cached namespace's
// model.TrafficDistributionAnnotation, "" for none or a namespace not
// cached (always, without InformerOptions.Namespaces).
func (s *InformerSource) NamespaceTrafficDistribution(name string) string {
	if s.nsInf == nil {
		return ""
	}
	obj, ok, err := s.nsInf.GetStore().GetByKey(name)
	if err != nil || !ok {
		return ""
	}
	ns, _ := obj.(*corev1.Namespace)
	return ns.GetAnnotations()[model.TrafficDistributionAnnotation]
}

// NamespaceLabels returns the labels of a cached namespace, and false for
// one not cached (always, without InformerOptions.Namespaces).
func (s *InformerSource) NamespaceLabels(name string) (map[string]string, bool) {
	if s.nsInf == nil {
		return nil, false
	}
	obj, ok, err := s.nsInf.GetStore().GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, false
	}
	return ns.Labels, true
}

func (s *InformerSource) watchesNamespaces() bool { return s.nsInf != nil }

// Subscribe adds a handler, called from the informers' goroutines.
func (s *InformerSource) Subscribe(handler func(Ref)) (unsubscribe func()) {
	return s.handlers.Add(handler)
}

// ServiceEntries returns every ServiceEntry in the informer's cache.
func (s *InformerSource) ServiceEntries() []*networkingv1.ServiceEntry {
	out, _ := s.seLister.List(labels.Everything())
	return out
}

// WorkloadEntries returns every WorkloadEntry in the informer's cache.
func (s *InformerSource) WorkloadEntries() []*networkingv1.WorkloadEntry {
	out, _ := s.weLister.List(labels.Everything())
	return out
}

// ServiceEntry returns a cached ServiceEntry, or nil.
func (s *InformerSource) ServiceEntry(namespace, name string) *networkingv1.ServiceEntry {
	se, err := s.seLister.ServiceEntries(namespace).Get(name)
	if err != nil {
		return nil
	}
	return se
}

// WorkloadEntry returns a cached WorkloadEntry, or nil.
func (s *InformerSource) WorkloadEntry(namespace, name string) *networkingv1.WorkloadEntry {
	we, err := s.weLister.WorkloadEntries(namespace).Get(name)
	if err != nil {
		return nil
	}
	return we
}

// strip is the informers' transform: it returns a lean copy of a
// ServiceEntry, WorkloadEntry or Namespace (its name and labels) and
// leaves anything else (tombstones) alone. It copies rather than trims in place, so that an object shared
// with a fake clientset's tracker is never modified.
func strip(obj any) (any, error) {
	switch o := obj.(type) {
	case *networkingv1.ServiceEntry:
		out := &networkingv1.ServiceEntry{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(&o.ObjectMeta)}
		o.Spec.DeepCopyInto(&out.Spec)
		for _, a := range o.Status.Addresses {
			if a != nil {
				out.Status.Addresses = append(out.Status.Addresses, a.DeepCopy())
			}
		}
		return out, nil
	case *networkingv1.WorkloadEntry:
		out := &networkingv1.WorkloadEntry{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(&o.ObjectMeta)}
		o.Spec.DeepCopyInto(&out.Spec)
		for _, c := range o.Status.Conditions {
			if c != nil && c.Type == conditionHealthy {
				out.Status.Conditions = append(out.Status.Conditions, c.DeepCopy())
			}
		}
		return out, nil
	case *corev1.Namespace:
		out := &corev1.Namespace{TypeMeta: o.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: o.Name, ResourceVersion: o.ResourceVersion, Labels: maps.Clone(o.Labels),
		}}
		out.Annotations = keptAnnotations(o.Annotations)
		return out, nil
	}
	return obj, nil
}

// keptAnnotations returns the annotations the registry reads of a
// ServiceEntry, WorkloadEntry or Namespace: traffic distribution, the
// waypoint canary weight (model.KeepAnnotations), a WorkloadEntry's
// health checks, ambient redirection and auto-registration group; nil
// when it has none of them.
func keptAnnotations(a map[string]string) map[string]string {
	var out map[string]string
	for _, k := range [...]string{model.TrafficDistributionAnnotation, model.AnnotationWaypointCanaryWeight,
		annotationHealthChecks, model.AmbientRedirectionAnnotation, annotationAutoRegistrationGroup} {
		if v, ok := a[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// leanMeta keeps the metadata the registry and the informer read.
func leanMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		UID:               m.UID,
		ResourceVersion:   m.ResourceVersion,
		Generation:        m.Generation,
		CreationTimestamp: m.CreationTimestamp,
		DeletionTimestamp: m.DeletionTimestamp,
	}
	if len(m.Labels) > 0 {
		out.Labels = make(map[string]string, len(m.Labels))
		for k, v := range m.Labels {
			out.Labels[k] = v
		}
	}
	out.Annotations = keptAnnotations(m.Annotations)
	return out
}
