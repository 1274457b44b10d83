package bench

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// System names.
const (
	Floor     = "floor"
	Kube      = "kube"
	Aggregate = "aggregate"
)

// Systems lists the systems a run measures, floor first.
var Systems = []string{Floor, Kube, Aggregate}

// FloorNotify is the floor whose update handler hands each change to a
// subscriber through a registry.Notifier, as every meshreg registry
// hands its events, and reports it from the subscriber's goroutine. It
// is not a registry and not in Systems: BenchmarkChurnLarge measures it,
// and a harness run whose Options.Systems names it, to tell what the
// delivery of an event to a subscriber adds to the floor's cost of a
// change, before any conversion or index.
const FloorNotify = "floor-notify"

// AggregateMetrics is the aggregate with Prometheus metrics on, in every
// registry (kube, serviceentry, aggregate), over one registry of the
// benchmark's own. It is not in Systems: BenchmarkChurnLarge measures it
// beside the aggregate, for the cost of the metrics.
const AggregateMetrics = "aggregate-metrics"

// KubeShared is the kube controller on the informers of a client-go
// SharedInformerFactory (kube.Options.Informers), of the five kinds it
// reads, as a control plane that shares its informers runs it: its heap
// holds the factory's whole objects (the control plane's own cache) and
// the controller's lean ones. It is not in Systems: a run whose
// Options.Systems names it measures it.
const KubeShared = "kube-shared"

// floorKeys reports whether system name reports changes by the changed
// object's key (change.floorKey) rather than by service hostname.
func floorKeys(name string) bool { return name == Floor || name == FloorNotify }

// system is one thing measured over a preloaded clientset.
type system interface {
	// start starts it; stop (after start) stops it and waits.
	start(ctx context.Context) error
	stop()
	// synced reports whether its initial state is complete: every
	// informer's list reached the handlers (floor), or every endpoint
	// is queryable (registries).
	synced() bool
	// setSink sets the function called on each change after sync: the
	// floor calls it with "kind/namespace/name" of each updated slice
	// or pod, a registry with the hostname of each endpoints event.
	setSink(func(string))
	// discovery is the registry's query side; nil for the floor.
	discovery() registry.Discovery
}

// sink holds the churn observer; nil until set.
type sink struct{ f atomic.Pointer[func(string)] }

func (s *sink) setSink(f func(string)) { s.f.Store(&f) }

func (s *sink) call(key string) {
	if f := s.f.Load(); f != nil {
		(*f)(key)
	}
}

// floorSystem is a bare SharedInformerFactory with Services,
// EndpointSlices and Pods informers, no transforms, and handlers that do
// nothing but report updates to the sink.
type floorSystem struct {
	sink
	factory informers.SharedInformerFactory
	regs    []cache.ResourceEventHandlerRegistration
	stopCh  chan struct{}
	// unsub ends the subscription of a FloorNotify; nil for the floor.
	unsub func()
}

// newFloor returns the floor, or with notify the FloorNotify variant.
func newFloor(client kubernetes.Interface, notify bool) (*floorSystem, error) {
	f := &floorSystem{factory: informers.NewSharedInformerFactory(client, 0), stopCh: make(chan struct{})}
	report := f.call
	if notify {
		// The event carries the changed object's key as its service's
		// hostname.
		var n registry.Notifier
		f.unsub = n.Subscribe(registry.HandlerFuncs{
			EndpointsFunc: func(e registry.EndpointsEvent) { f.call(string(e.Service.Hostname)) },
		}, nil)
		report = func(key string) {
			n.Notify(registry.EndpointsEvent{Service: model.ServiceKey{Hostname: model.Hostname(key)}})
		}
	}
	for kind, in := range map[string]cache.SharedIndexInformer{
		"Service":       f.factory.Core().V1().Services().Informer(),
		"EndpointSlice": f.factory.Discovery().V1().EndpointSlices().Informer(),
		"Pod":           f.factory.Core().V1().Pods().Informer(),
	} {
		reg, err := in.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) {},
			UpdateFunc: func(_, obj any) {
				if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
					report(kind + "/" + key)
				}
			},
			DeleteFunc: func(any) {},
		})
		if err != nil {
			return nil, err
		}
		f.regs = append(f.regs, reg)
	}
	return f, nil
}

func (f *floorSystem) start(context.Context) error {
	f.factory.Start(f.stopCh)
	return nil
}

func (f *floorSystem) stop() {
	close(f.stopCh)
	f.factory.Shutdown()
	if f.unsub != nil {
		f.unsub()
	}
}

func (f *floorSystem) synced() bool {
	for _, r := range f.regs {
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

func (f *floorSystem) discovery() registry.Discovery { return nil }

// registrySystem runs a meshreg registry (a kube.Controller, alone or in
// an aggregate) with one subscriber, subscribed before it starts, as a
// control plane would be.
type registrySystem struct {
	sink
	reg     regDiscovery
	run     func(ctx context.Context) error
	synced_ func() bool
	unsub   func()
	cancel  context.CancelFunc
	done    chan error
	// want is the number of endpoints (pods × ports) to wait for, and
	// complete caches that they were all seen.
	want     int
	complete atomic.Bool
	events   atomic.Int64
}

// regDiscovery is what the harness needs of a registry.
type regDiscovery interface {
	registry.Discovery
	registry.Controller
}

func newRegistry(name string, client kubernetes.Interface, sc *Scenario, withServiceEntries bool) (*registrySystem, error) {
	var metrics prometheus.Registerer
	if name == AggregateMetrics {
		metrics = prometheus.NewRegistry()
	}
	opts := kube.Options{ClusterID: Cluster, DomainSuffix: DomainSuffix, Metrics: metrics}
	var factory informers.SharedInformerFactory
	if name == KubeShared {
		factory = informers.NewSharedInformerFactory(client, 0)
		opts.Informers = kube.FactoryInformers(factory)
	}
	kc, err := kube.New(client, opts)
	if err != nil {
		return nil, err
	}
	r := &registrySystem{want: 2 * sc.Config.Endpoints()}
	var d regDiscovery
	switch name {
	case Kube:
		d = kc
		r.run = kc.Run
	case KubeShared:
		d = kc
		r.run = func(ctx context.Context) error {
			factory.Start(ctx.Done())
			defer factory.Shutdown()
			return kc.Run(ctx)
		}
	case Aggregate, AggregateMetrics:
		agg, err := aggregate.New(aggregate.Options{Metrics: metrics})
		if err != nil {
			return nil, err
		}
		if err := agg.Add(kc); err != nil {
			return nil, err
		}
		if withServiceEntries {
			src, err := serviceentry.NewStaticSource()
			if err != nil {
				return nil, err
			}
			for _, se := range sc.ServiceEntries {
				if err := src.Upsert(se); err != nil {
					return nil, err
				}
			}
			sec, err := serviceentry.New(src, serviceentry.Options{ClusterID: Cluster, Metrics: metrics})
			if err != nil {
				return nil, err
			}
			if err := agg.Add(sec); err != nil {
				return nil, err
			}
		}
		d = agg
		r.run = agg.Run
	default:
		return nil, errors.New("bench: unknown system " + name)
	}
	r.reg = d
	r.synced_ = d.HasSynced
	r.unsub = d.Subscribe(registry.HandlerFuncs{
		EndpointsFunc: func(e registry.EndpointsEvent) {
			r.events.Add(1)
			if !e.Initial && e.Shard.Provider == model.Kubernetes {
				r.call(string(e.Service.Hostname))
			}
		},
	})
	return r, nil
}

func (r *registrySystem) start(ctx context.Context) error {
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan error, 1)
	go func() { r.done <- r.run(ctx) }()
	return nil
}

func (r *registrySystem) stop() {
	r.unsub()
	r.cancel()
	<-r.done
}

// synced is HasSynced and every endpoint of the scenario queryable.
func (r *registrySystem) synced() bool {
	if r.complete.Load() {
		return true
	}
	if !r.synced_() {
		return false
	}
	n := 0
	for _, svc := range r.reg.Services() {
		if svc.Provider == model.Kubernetes {
			n += len(r.reg.Endpoints(svc.Key(), registry.EndpointQuery{}))
		}
	}
	if n < r.want {
		return false
	}
	r.complete.Store(true)
	return true
}

func (r *registrySystem) discovery() registry.Discovery { return r.reg }

func newSystem(name string, client kubernetes.Interface, sc *Scenario, withServiceEntries bool) (system, error) {
	if floorKeys(name) {
		return newFloor(client, name == FloorNotify)
	}
	return newRegistry(name, client, sc, withServiceEntries)
}
