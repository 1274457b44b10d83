package xds

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Source is what an Updater reads: a registry's queries and its events.
// An aggregate.Controller is one, as is any registry.Registry.
type Source interface {
	registry.Discovery
	Subscribe(h registry.Handler) (unsubscribe func())
}

// Event kinds, as passed to Options.Observe.
const (
	KindService   = "service"
	KindEndpoints = "endpoints"
	KindWorkload  = "workload"
)

// Options configure an Updater. The zero value is valid.
type Options struct {
	// Logger receives the updater's log records. Default: discard.
	Logger *slog.Logger
	// Observe is called after each event is handled, with the event's
	// kind (KindService, KindEndpoints or KindWorkload) and the time
	// handling took. It is called from the registry's handler goroutine,
	// one call at a time. Default: nothing.
	Observe func(kind string, took time.Duration)
}

func (o Options) defaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observe == nil {
		o.Observe = func(string, time.Duration) {}
	}
	return o
}

// Updater keeps Caches in step with a registry, incrementally.
//
// It keeps, per hostname, the service it translated and the resources it
// published. A service event re-translates that hostname only; an
// endpoints event re-translates that service's load assignments only.
// Each new resource is compared with the published one and only those
// that differ are written to the caches, so a client is sent a resource
// only when it changed.
//
// A hostname declared in several namespaces is served from the service
// that wins precedence (registry.Discovery.GetService). The updater reads
// the registry's current state when it handles an event, so it converges
// on the registry's state even when the registry has moved past the event.
type Updater struct {
	src    Source
	caches *Caches
	opts   Options

	// mu guards hosts. It is held while one event is handled.
	mu    sync.Mutex
	hosts map[model.Hostname]*hostState
}

// hostState is what was published for one hostname.
type hostState struct {
	// svc is the service translated.
	svc *model.Service
	// res holds the published resources of each kind, by name.
	res [numKinds]map[string]proto.Message
}

// NewUpdater returns an updater that writes src's resources into caches
// once Run starts.
func NewUpdater(src Source, caches *Caches, opts Options) *Updater {
	return &Updater{src: src, caches: caches, opts: opts.defaults(), hosts: map[model.Hostname]*hostState{}}
}

var _ registry.Handler = (*handler)(nil)

// Run subscribes to the source and keeps the caches up to date until ctx
// is done; then it unsubscribes and returns. The subscription's initial
// state builds the first resources.
func (u *Updater) Run(ctx context.Context) error {
	unsubscribe := u.src.Subscribe(&handler{u: u})
	<-ctx.Done()
	unsubscribe()
	return nil
}

// handler adapts the Updater to registry.Handler without exporting the
// methods on Updater.
type handler struct{ u *Updater }

func (h *handler) OnService(e registry.ServiceEvent) {
	start := time.Now()
	h.u.syncService(e.Service().Hostname)
	h.u.opts.Observe(KindService, time.Since(start))
}

func (h *handler) OnEndpoints(e registry.EndpointsEvent) {
	start := time.Now()
	h.u.syncEndpoints(e.Service)
	h.u.opts.Observe(KindEndpoints, time.Since(start))
}

// OnWorkload does nothing to the caches: workloads reach clients through
// the endpoints events of the services that select them.
func (h *handler) OnWorkload(registry.WorkloadEvent) {
	h.u.opts.Observe(KindWorkload, 0)
}

// syncService re-translates every resource of one hostname.
func (u *Updater) syncService(host model.Hostname) {
	u.mu.Lock()
	defer u.mu.Unlock()
	svc := u.src.GetService(host)
	if svc != nil {
		if err := Translatable(svc); err != nil {
			u.opts.Logger.Debug("service skipped", "service", svc.Key().String(), "reason", err.Error())
			svc = nil
		}
	}
	st := u.hosts[host]
	if svc == nil {
		if st != nil {
			for k := range numKinds {
				u.publish(host, st, k, nil)
			}
			delete(u.hosts, host)
		}
		return
	}
	if st == nil {
		st = &hostState{}
		u.hosts[host] = st
	}
	if !st.svc.Equals(svc) {
		l, r, c := serviceResources(svc, u.opts.Logger)
		u.publish(host, st, listeners, l)
		u.publish(host, st, routes, r)
		u.publish(host, st, clusters, c)
	}
	st.svc = svc
	u.publish(host, st, endpoints, u.loadAssignments(svc))
}

// syncEndpoints re-translates the load assignments of one service, if it
// is the one its hostname is served from.
func (u *Updater) syncEndpoints(key model.ServiceKey) {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.hosts[key.Hostname]
	if st == nil || st.svc.Key() != key {
		return // not served, or shadowed by another namespace's service
	}
	u.publish(key.Hostname, st, endpoints, u.loadAssignments(st.svc))
}

// serviceResources translates the listeners, routes and clusters of every
// port of svc. A resource that fails to translate is logged and left out.
func serviceResources(svc *model.Service, log *slog.Logger) (l, r, c map[string]proto.Message) {
	l, r, c = map[string]proto.Message{}, map[string]proto.Message{}, map[string]proto.Message{}
	for _, p := range svc.Ports {
		if lis, err := Listener(svc.Hostname, p.Port); err != nil {
			log.Error("listener not translated", "service", svc.Key().String(), "err", err)
		} else {
			l[lis.Name] = lis
		}
		rc := RouteConfiguration(svc.Hostname, p.Port)
		r[rc.Name] = rc
		if cl, err := Cluster(svc.Hostname, p); err != nil {
			log.Error("cluster not translated", "service", svc.Key().String(), "err", err)
		} else {
			c[cl.Name] = cl
		}
	}
	return l, r, c
}

// loadAssignments translates the load assignment of every port of svc from
// the registry's current endpoints.
func (u *Updater) loadAssignments(svc *model.Service) map[string]proto.Message {
	eps := u.src.Endpoints(svc.Key(), registry.EndpointQuery{})
	out := make(map[string]proto.Message, len(svc.Ports))
	for _, p := range svc.Ports {
		cla := LoadAssignment(svc.Hostname, p, eps)
		out[cla.ClusterName] = cla
	}
	return out
}

// publish makes want the published resources of one kind for a host:
// resources that differ from the published ones are written, those no
// longer wanted deleted, the rest left alone. The caller holds u.mu.
func (u *Updater) publish(host model.Hostname, st *hostState, k kind, want map[string]proto.Message) {
	have := st.res[k]
	update := map[string]types.Resource{}
	for name, m := range want {
		if old, ok := have[name]; !ok || !proto.Equal(old, m) {
			update[name] = m
		} else {
			want[name] = old // keep the published value
		}
	}
	var del []string
	for name := range have {
		if _, ok := want[name]; !ok {
			del = append(del, name)
		}
	}
	st.res[k] = want
	if len(update) == 0 && len(del) == 0 {
		return
	}
	slices.Sort(del)
	if err := u.caches.byKind[k].UpdateResources(update, del); err != nil {
		u.opts.Logger.Error("xds cache not updated", "host", string(host), "type", typeURLs[k], "err", err)
		return
	}
	u.opts.Logger.Debug("xds resources updated", "host", string(host), "type", typeURLs[k],
		"updated", len(update), "deleted", len(del))
}
