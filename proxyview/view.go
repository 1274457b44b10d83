package proxyview

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/internal/derived"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Change says what one generation changed. A generation may change no
// service: the one that turns Snapshot.Synced true, for one.
type Change struct {
	// Generation is the generation published; Snapshot is it.
	Generation uint64
	Snapshot   *Snapshot
	// Initial marks the first call a subscriber gets: the view's state
	// when it subscribed, Snapshot, with no Services.
	Initial bool
	// Services are the keys of the services whose service or endpoints
	// changed (added, updated or deleted), sorted.
	Services []model.ServiceKey
	// Gateways is true when the network gateways changed: the endpoints
	// of every service may have changed for proxies on other networks.
	Gateways bool
	// Since is when the first event the change holds reached the view:
	// what a server measures the delay of its responses from. Zero for
	// the Initial change.
	Since time.Time
}

// View is the proxy's view of a registry. Run keeps it up to date; each
// state it publishes is a Snapshot with the next generation. It is safe
// for concurrent use.
//
// The view follows the source's events and takes what they carry: a
// service event's service, an endpoints event's service endpoints
// (registry.EndpointsEvent.All), a gateways event's network gateways,
// the source's SyncedEvent; it never asks the source. Run's goroutine
// applies them (ARCHITECTURE.md, "derived views") and publishes a
// snapshot that shares everything else with the previous one. Events
// that arrive while it works are one change.
type View struct {
	src  registry.Reader
	conf *config

	snap atomic.Pointer[Snapshot]
	loop *derived.Loop[marks, Change]

	namesChanged chan struct{}

	// mu guards the gateways' host names and what they resolved to.
	mu       sync.Mutex
	names    []string
	resolved map[string][]netip.Addr

	// Only Run's goroutine uses what follows. gateways are the source's
	// network gateways, as its latest event carried them. looked holds
	// the host names the resolver has looked up at least once, whatever
	// the answer, as the marks apply took say: the view has not synced
	// while a name the gateways use is not among them. sourceSynced is
	// set once the source's SyncedEvent is among the marks apply took.
	gateways     []model.NetworkGateway
	looked       map[string]bool
	sourceSynced bool
}

// marks are what changed in the source since apply last looked: services
// by key, the gateways, whether the source synced, and the gateway host
// names looked up for the first time.
type marks struct {
	services derived.ServiceMarks
	// gatewaysSet says a gateways event came, with gws; gateways that
	// the gateways' host names resolved to something new.
	gatewaysSet bool
	gws         []model.NetworkGateway
	gateways    bool
	synced      bool
	looked      []string
}

func newMarks() marks { return marks{services: derived.ServiceMarks{}} }

// New returns a view of src (a registry or the aggregate); Run starts
// it. The view syncs after src's SyncedEvent and follows the network
// gateways src publishes (registry.NetworkGatewaysEvent). The error
// wraps ErrInvalidOptions and names each option it cannot use.
func New(src registry.Reader, opts Options) (*View, error) {
	o, err := opts.defaults()
	if err != nil {
		return nil, err
	}
	conf := &config{Options: o, clusterLocal: newClusterLocal(o)}
	v := &View{
		src:          src,
		conf:         conf,
		loop:         derived.NewLoop[marks, Change]("proxyview", newMarks, derived.Debounce{}),
		namesChanged: make(chan struct{}, 1),
		looked:       map[string]bool{},
	}
	v.snap.Store(emptySnapshot(conf))
	return v, nil
}

// Snapshot returns the latest snapshot; before Run's first state, an
// empty one at generation 0.
func (v *View) Snapshot() *Snapshot { return v.snap.Load() }

// HasSynced reports whether the latest snapshot holds the source's
// initial state (Snapshot.Synced), its network gateways' host names
// looked up once (Options.Resolver; a lookup that fails counts).
func (v *View) HasSynced() bool { return v.snap.Load().synced }

// Subscribe registers f, called on Run's goroutine one call at a time
// (f must return quickly; Debouncer does): first with the view's state
// then (an Initial Change: its Snapshot, no Services), then with the
// Change of each generation published after it. The returned function
// unsubscribes; it is idempotent.
func (v *View) Subscribe(f func(Change)) (unsubscribe func()) { return v.loop.Subscribe(f) }

// Settled reports whether the view has applied every change its source
// reported, with nothing pending.
func (v *View) Settled() bool { return v.loop.Settled() }

// Run subscribes to the source and keeps the view up to date until ctx
// is done; then it unsubscribes and returns nil. A view runs once; a
// second call returns an error wrapping registry.ErrAlreadyRunning.
func (v *View) Run(ctx context.Context) error {
	return v.loop.Run(ctx, v.follow, v.applyBatch, v.current)
}

// follow subscribes to the source, each event a mark, starts the
// resolver and marks the first batch; it returns how to stop both.
func (v *View) follow() (stop func()) {
	unsubscribe := v.src.Subscribe(v.handler())
	ctx, stopResolving := context.WithCancel(context.Background())
	resolving := make(chan struct{})
	go func() {
		defer close(resolving)
		v.resolveLoop(ctx)
	}()
	// The first snapshot, at generation 1, is published even when the
	// source holds nothing.
	v.loop.Mark(func(m *marks) { m.gateways = true })
	return func() {
		unsubscribe()
		stopResolving()
		<-resolving
	}
}

// handler marks each event of the source.
func (v *View) handler() registry.HandlerFuncs {
	mark := v.loop.Mark
	return registry.HandlerFuncs{
		ServiceFunc:   func(e registry.ServiceEvent) { mark(func(m *marks) { m.services.OnService(e) }) },
		EndpointsFunc: func(e registry.EndpointsEvent) { mark(func(m *marks) { m.services.OnEndpoints(e) }) },
		NetworkGatewaysFunc: func(e registry.NetworkGatewaysEvent) {
			mark(func(m *marks) { m.gatewaysSet, m.gws = true, e.Gateways })
		},
		SyncedFunc: func(registry.SyncedEvent) { mark(func(m *marks) { m.synced = true }) },
	}
}

// current is the view's state as a subscriber's first Change.
func (v *View) current() Change {
	s := v.snap.Load()
	return Change{Generation: s.gen, Snapshot: s, Initial: true}
}

// applyBatch takes a batch of marks and publishes the next snapshot
// when anything changed.
func (v *View) applyBatch(m marks, since time.Time) (Change, bool) {
	keys := slices.SortedFunc(maps.Keys(m.services), model.ServiceKey.Compare)
	if m.gatewaysSet {
		v.gateways = m.gws
	}
	readGateways := m.gateways || m.gatewaysSet
	for _, name := range m.looked {
		v.looked[name] = true
	}
	// The SyncedEvent comes after every event of the source's initial
	// state, so the marks taken with it hold that state.
	v.sourceSynced = v.sourceSynced || m.synced

	old := v.snap.Load()
	next := *old
	var (
		services = old.services.Edit()
		vis      *visibilityEdit
		change   = Change{Generation: old.gen + 1, Since: since}
	)
	for _, key := range keys {
		sm := m.services[key]
		prev, had := services.Get(key)
		var svc *model.Service
		var eps []*model.Endpoint
		switch {
		case sm.Service:
			svc = sm.Svc
		case had:
			svc = prev.svc
		}
		switch {
		case svc == nil:
		case sm.Endpoints:
			eps = sm.Eps
		case had:
			eps = prev.eps
		}
		if !had && svc == nil {
			continue // added and deleted, or endpoints of an unknown service
		}
		svcChanged := sm.Service || svc == nil
		change.Services = append(change.Services, key)
		var cur *entry
		if svc != nil {
			cur = &entry{svc: svc, eps: eps}
			if had && !svcChanged {
				cur.svc, cur.scope, cur.clusterLocal = prev.svc, prev.scope, prev.clusterLocal
			} else {
				cur.scope = scopeOf(svc, v.conf.DefaultServiceExportTo, v.conf.ServiceEntryVisibility)
				cur.clusterLocal = v.conf.clusterLocal.is(svc.Hostname)
			}
			services.Set(key, cur)
		} else {
			services.Delete(key)
		}
		if svcChanged {
			if vis == nil {
				vis = old.vis.edit()
			}
			if had {
				vis.remove(prev.svc, prev.scope)
			}
			if cur != nil {
				vis.add(cur.svc, cur.scope)
			}
		}
	}
	next.services = services.Done()
	if vis != nil {
		next.vis = vis.done()
	}
	if readGateways {
		gws := v.gateways
		var resolved map[string][]netip.Addr
		if !v.conf.SkipGatewayHostnames {
			resolved = v.wantNames(hostnames(gws))
		}
		if !slices.Equal(gws, old.gateways.all) || !maps.EqualFunc(resolved, old.gateways.resolved, slices.Equal) {
			next.gateways = newGateways(gws, resolved)
			change.Gateways = true
		}
	}
	next.synced = old.synced || v.sourceSynced && v.namesLooked()
	if len(change.Services) == 0 && !change.Gateways && next.synced == old.synced && old.gen > 0 {
		return Change{}, false
	}
	next.gen = change.Generation
	next.superseded = make(chan struct{})
	v.snap.Store(&next)
	close(old.superseded)
	change.Snapshot = &next
	return change, true
}
