package proxyview

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/internal/cow"
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
// The view follows the source's events: a service or endpoints event
// marks the service, a gateways event the gateways, and Run's goroutine
// reads what is marked from the source (never inside a lock of the
// view's) and publishes a snapshot that shares everything else with the
// previous one. Events that arrive while it works are one change.
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
	// Only apply uses it.
	looked map[string]bool
}

// marks are what changed in the source since apply last looked: services
// by key, the gateways, and the gateway host names looked up for the
// first time.
type marks struct {
	services map[model.ServiceKey]struct{}
	gateways bool
	looked   []string
}

func newMarks() marks { return marks{services: map[model.ServiceKey]struct{}{}} }

func (m *marks) empty() bool { return len(m.services) == 0 && !m.gateways && len(m.looked) == 0 }

// New returns a view of src (a registry or the aggregate); Run starts
// it. The view's HasSynced waits for src's; when src is also a
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
		ServiceFunc:         func(e registry.ServiceEvent) { v.mark(e.Service().Key()) },
		EndpointsFunc:       func(e registry.EndpointsEvent) { v.mark(e.Service) },
		NetworkGatewaysFunc: func(registry.NetworkGatewaysEvent) { v.markGateways() },
	})
	defer unsubscribe()
	resolveCtx, stopResolving := context.WithCancel(ctx)
	resolving := make(chan struct{})
	go func() {
		defer close(resolving)
		v.resolveLoop(resolveCtx)
	}()
	defer func() { stopResolving(); <-resolving }()
	// The state the source had before the subscription: a source that has
	// synced already may still be replaying it to the handler.
	for _, svc := range v.src.Services() {
		v.mark(svc.Key())
	}
	v.markGateways()
	// Until the view has synced it looks at the source's HasSynced every
	// syncPoll, since no event says when that turns true.
	poll := time.NewTicker(syncPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-v.in.Wake():
		case <-poll.C:
		}
		v.apply()
		if v.HasSynced() {
			poll.Stop()
		}
	}
}

// syncPoll is how often a view that has not synced asks its source
// whether it has (client-go's WaitForCacheSync polls at 100ms).
const syncPoll = 50 * time.Millisecond

func (v *View) mark(k model.ServiceKey) {
	v.in.Add(func(m *marks) { m.services[k] = struct{}{} })
}

func (v *View) markGateways() {
	v.in.Add(func(m *marks) { m.gateways = true })
}

// sourceSynced reports whether the source has synced.
func (v *View) sourceSynced() bool { return v.src.HasSynced() }

// apply reads what is marked from the source and publishes the next
// snapshot when anything changed.
func (v *View) apply() {
	// Synced before taking the marks: everything the source had sent by
	// then is marked, or was read when Run started.
	synced := v.sourceSynced()
	m := v.in.Take(newMarks())
	defer v.in.Done()
	keys := slices.SortedFunc(maps.Keys(m.services), model.ServiceKey.Compare)
	readGateways := m.gateways
	for _, name := range m.looked {
		v.looked[name] = true
	}

	old := v.snap.Load()
	next := *old
	var (
		services = old.services.Edit()
		ips      *cow.Editor[netip.Addr, []target]
		vis      *visibilityEdit
		change   = Change{Generation: old.gen + 1}
	)
	for _, key := range keys {
		svc := v.src.ServiceByKey(key)
		var eps []*model.Endpoint
		if svc != nil {
			eps = v.src.Endpoints(key, registry.EndpointQuery{})
		}
		prev, had := services.Get(key)
		svcChanged := !had || !prev.svc.Equals(svc)
		epsChanged := !had || !slices.EqualFunc(prev.eps, eps, (*model.Endpoint).Equals)
		if !had && svc == nil || !svcChanged && !epsChanged {
			continue
		}
		change.Services = append(change.Services, key)
		var cur *entry
		if svc != nil {
			cur = &entry{svc: svc, eps: eps}
			if had && !svcChanged {
				cur.svc, cur.scope, cur.clusterLocal = prev.svc, prev.scope, prev.clusterLocal
			} else {
				cur.scope = scopeOf(svc, v.conf.DefaultServiceExportTo)
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
		if epsChanged {
			if ips == nil {
				ips = old.ips.Edit()
			}
			var prevEps []*model.Endpoint
			if had {
				prevEps = prev.eps
			}
			reindex(ips, key, prevEps, eps)
		}
	}
	next.services = services.Done()
	if vis != nil {
		next.vis = vis.done()
	}
	if ips != nil {
		next.ips = ips.Done()
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
	next.synced = old.synced || synced && v.namesLooked()
	if len(change.Services) > 0 || change.Gateways || next.synced != old.synced || old.gen == 0 {
		next.gen = change.Generation
		next.superseded = make(chan struct{})
		v.snap.Store(&next)
		close(old.superseded)
		v.notify(change)
	}
}

// reindex moves one service's entries in the inbound index from its old
// endpoints to its new ones, touching only the IPs whose entries
// changed: a change of health alone touches none.
func reindex(ips *cow.Editor[netip.Addr, []target], key model.ServiceKey, prev, cur []*model.Endpoint) {
	before, after := targetsOf(key, prev), targetsOf(key, cur)
	for a, was := range before {
		if slices.Equal(was, after[a]) {
			continue
		}
		ts, _ := ips.Get(a)
		ts = slices.DeleteFunc(slices.Clone(ts), func(t target) bool { return t.key == key })
		ts = append(ts, after[a]...)
		if len(ts) == 0 {
			ips.Delete(a)
		} else {
			ips.Set(a, ts)
		}
	}
	for a, add := range after {
		if _, done := before[a]; done {
			continue
		}
		ts, _ := ips.Get(a)
		ips.Set(a, append(slices.Clip(ts), add...))
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
