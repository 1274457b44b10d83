package proxyview

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/workqueue"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Change says what one generation changed. A generation may change no
// service: the one that turns Snapshot.Synced true, for one.
type Change struct {
	// Generation is the generation published.
	Generation uint64
	// Services are the keys of the services whose service or endpoints
	// changed (added, updated or deleted), sorted.
	Services []model.ServiceKey
	// Gateways is true when the network gateways changed: the endpoints
	// of every service may have changed for proxies on other networks.
	Gateways bool
}

// View is the proxy's view of a registry. Run keeps it up to date; each
// state it publishes is a Snapshot with the next generation. It is safe
// for concurrent use.
//
// The view follows the source's events and takes what they carry: a
// service event's service, the fact that a service's endpoints or the
// gateways changed, the source's SyncedEvent. Run's goroutine applies
// them: it reads the marked services' endpoints (the events carry one
// shard's list, the view wants the service's) and the gateways from the
// source, never inside a lock of the view's, and publishes a snapshot
// that shares everything else with the previous one. Events that arrive
// while it works are one change.
type View struct {
	src  registry.Reader
	conf *config

	snap    atomic.Pointer[Snapshot]
	running atomic.Bool

	// in holds what changed in the source since apply last looked.
	in *workqueue.Queue[marks]

	namesChanged chan struct{}

	// mu guards subscribers, and the gateways' host names and what they
	// resolved to.
	mu          sync.Mutex
	subscribers map[int]func(Change)
	nextID      int
	names       []string
	resolved    map[string][]netip.Addr

	// looked holds the host names the resolver has looked up at least
	// once, whatever the answer, as the marks apply took say: the view
	// has not synced while a name the gateways use is not among them.
	// sourceSynced is set once the source's SyncedEvent is among the
	// marks apply took. Only apply uses them.
	looked       map[string]bool
	sourceSynced bool
}

// marks are what changed in the source since apply last looked: services
// by key, the gateways, whether the source synced, and the gateway host
// names looked up for the first time.
type marks struct {
	services map[model.ServiceKey]serviceMark
	gateways bool
	synced   bool
	looked   []string
}

// serviceMark is what the events since apply last looked said of one
// service.
type serviceMark struct {
	// service says that a service event came; svc is then the service
	// as the latest one left it, nil once deleted.
	service bool
	svc     *model.Service
	// endpoints says that an endpoints event came: apply reads them.
	endpoints bool
}

func newMarks() marks { return marks{services: map[model.ServiceKey]serviceMark{}} }

func (m *marks) empty() bool {
	return len(m.services) == 0 && !m.gateways && !m.synced && len(m.looked) == 0
}

// New returns a view of src (a registry or the aggregate); Run starts
// it. The view syncs after src's SyncedEvent; when src is also a
// registry.GatewayDiscovery, the view follows its network gateways. The
// error wraps ErrInvalidOptions and names each option it cannot use.
func New(src registry.Reader, opts Options) (*View, error) {
	o, err := opts.defaults()
	if err != nil {
		return nil, err
	}
	conf := &config{Options: o, clusterLocal: newClusterLocal(o)}
	v := &View{
		src:          src,
		conf:         conf,
		in:           workqueue.New(newMarks(), (*marks).empty),
		namesChanged: make(chan struct{}, 1),
		subscribers:  map[int]func(Change){},
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

// Subscribe registers f to be called with each generation's Change, after
// its snapshot is published, on Run's goroutine, one call at a time: f
// must return quickly (Debouncer does). The returned function
// unsubscribes; it is idempotent.
func (v *View) Subscribe(f func(Change)) (unsubscribe func()) {
	v.mu.Lock()
	id := v.nextID
	v.nextID++
	v.subscribers[id] = f
	v.mu.Unlock()
	return func() {
		v.mu.Lock()
		delete(v.subscribers, id)
		v.mu.Unlock()
	}
}

// Run subscribes to the source and keeps the view up to date until ctx
// is done; then it unsubscribes and returns nil. A view runs once; a
// second call returns an error wrapping registry.ErrAlreadyRunning.
func (v *View) Run(ctx context.Context) error {
	if !v.running.CompareAndSwap(false, true) {
		return fmt.Errorf("proxyview: %w", registry.ErrAlreadyRunning)
	}
	unsubscribe := v.src.Subscribe(registry.HandlerFuncs{
		ServiceFunc:         v.markService,
		EndpointsFunc:       func(e registry.EndpointsEvent) { v.markEndpoints(e.Service) },
		NetworkGatewaysFunc: func(registry.NetworkGatewaysEvent) { v.markGateways() },
		SyncedFunc:          func(registry.SyncedEvent) { v.markSynced() },
	})
	defer unsubscribe()
	resolveCtx, stopResolving := context.WithCancel(ctx)
	resolving := make(chan struct{})
	go func() {
		defer close(resolving)
		v.resolveLoop(resolveCtx)
	}()
	defer func() { stopResolving(); <-resolving }()
	// The first snapshot, at generation 1, is published even when the
	// source holds nothing.
	v.markGateways()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-v.in.Wake():
		}
		v.apply()
	}
}

// markService records a service event: the service it leaves.
func (v *View) markService(e registry.ServiceEvent) {
	key := e.Service().Key()
	v.in.Add(func(m *marks) {
		sm := m.services[key]
		sm.service, sm.svc = true, e.Current
		m.services[key] = sm
	})
}

// markEndpoints records that a service's endpoints changed.
func (v *View) markEndpoints(key model.ServiceKey) {
	v.in.Add(func(m *marks) {
		sm := m.services[key]
		sm.endpoints = true
		m.services[key] = sm
	})
}

func (v *View) markGateways() {
	v.in.Add(func(m *marks) { m.gateways = true })
}

func (v *View) markSynced() {
	v.in.Add(func(m *marks) { m.synced = true })
}

// apply takes what is marked, reads the marked endpoints and gateways
// from the source, and publishes the next snapshot when anything
// changed.
func (v *View) apply() {
	m := v.in.Take(newMarks())
	defer v.in.Done()
	keys := slices.SortedFunc(maps.Keys(m.services), model.ServiceKey.Compare)
	readGateways := m.gateways
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
		change   = Change{Generation: old.gen + 1}
	)
	for _, key := range keys {
		sm := m.services[key]
		prev, had := services.Get(key)
		var svc *model.Service
		var eps []*model.Endpoint
		switch {
		case sm.service:
			svc = sm.svc
		case had:
			svc = prev.svc
		}
		switch {
		case svc == nil:
		case sm.endpoints:
			eps = v.src.Endpoints(key, registry.EndpointQuery{})
		case had:
			eps = prev.eps
		}
		if !had && svc == nil {
			continue // added and deleted, or endpoints of an unknown service
		}
		svcChanged := sm.service || svc == nil
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
		var gws []model.NetworkGateway
		if gd, ok := v.src.(registry.GatewayDiscovery); ok {
			gws = gd.NetworkGateways()
		}
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
	if len(change.Services) > 0 || change.Gateways || next.synced != old.synced || old.gen == 0 {
		next.gen = change.Generation
		next.superseded = make(chan struct{})
		v.snap.Store(&next)
		close(old.superseded)
		v.notify(change)
	}
}

func (v *View) notify(c Change) {
	v.mu.Lock()
	subs := slices.Collect(maps.Values(v.subscribers))
	v.mu.Unlock()
	for _, f := range subs {
		f(c)
	}
}
