package address

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/internal/derived"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Event is the change of one resource in a generation.
type Event struct {
	// Key is the resource's key: a workload's uid or a service's
	// "namespace/hostname".
	Key string
	// Type is model.EventAdd, EventUpdate or EventDelete.
	Type model.EventType
}

// Change says what one generation changed.
type Change struct {
	// Generation is the generation published; Snapshot is it.
	Generation uint64
	Snapshot   *Snapshot
	// Initial marks the first call a subscriber gets: the index's state
	// when it subscribed, Snapshot, with no Events.
	Initial bool
	// Events are the resources added, changed and removed, sorted by
	// key; empty for the generation that only turns Synced true.
	Events []Event
	// Since is when the first event the change holds reached the index:
	// what a server measures the delay of its responses from. Zero for
	// the Initial change.
	Since time.Time
}

// Index is the address index of a registry, usually the aggregate: the
// workloads and services ztunnel reads, keyed by uid, "network/IP" and
// "namespace/hostname". Run keeps it up to date; each state it publishes
// is a Snapshot with the next generation. It is safe for concurrent use.
//
// The index follows the source's events and takes what they carry: a
// service event's service, a workload event's workload, an endpoints
// event's service endpoints (registry.EndpointsEvent.All), and the
// cluster metadata (networks, namespaces, Gateway API Gateways) of a
// registry.MetadataDiscovery source, which the kube registries and the
// aggregate publish; it never asks the source. Run's goroutine applies
// them in debounced batches and rebuilds only what they touch
// (ARCHITECTURE.md, "address").
type Index struct {
	src  registry.Reader
	opts Options

	snap atomic.Pointer[Snapshot]
	loop *derived.Loop[marks, Change]

	// st is the index's own state; only Run's goroutine uses it.
	st *state
	// rederived counts the derivations applied, by kind, for the tests
	// that hold a change to costing what it changes.
	rederived struct{ workloads, services, entries, slices atomic.Int64 }
}

// marks are what changed in the source since apply last looked.
type marks struct {
	services  derived.ServiceMarks
	workloads map[model.WorkloadKey]*model.WorkloadInstance
	// clusters, namespaces and gateways hold the latest of each that
	// changed, nil once deleted.
	clusters   map[model.ClusterID]*model.Cluster
	namespaces map[model.NamespaceKey]*model.Namespace
	gateways   map[model.GatewayKey]*model.Gateway
	// first is set for the first batch, which publishes a generation
	// even when the source holds nothing.
	first  bool
	synced bool
}

func newMarks() marks {
	return marks{services: derived.ServiceMarks{}, workloads: map[model.WorkloadKey]*model.WorkloadInstance{},
		clusters: map[model.ClusterID]*model.Cluster{}, namespaces: map[model.NamespaceKey]*model.Namespace{},
		gateways: map[model.GatewayKey]*model.Gateway{}}
}

// New returns the address index of src; Run starts it. The error wraps
// ErrInvalidOptions.
func New(src registry.Reader, opts Options) (*Index, error) {
	o, err := opts.defaults()
	if err != nil {
		return nil, err
	}
	x := &Index{
		src:  src,
		opts: o,
		loop: derived.NewLoop[marks, Change]("address", newMarks, derived.Debounce{Quiet: o.Debounce, Max: o.DebounceMax}),
		st:   newState(),
	}
	x.snap.Store(&Snapshot{})
	return x, nil
}

// Snapshot returns the latest snapshot; before Run's first state, an
// empty one at generation 0.
func (x *Index) Snapshot() *Snapshot { return x.snap.Load() }

// HasSynced reports whether the latest snapshot holds the source's
// initial state. Once true it stays true.
func (x *Index) HasSynced() bool { return x.snap.Load().synced }

// Subscribe registers f, called on Run's goroutine one call at a time
// (f must return quickly): first with the index's state then (an
// Initial Change: its Snapshot, no Events), then with the Change of each
// generation published after it. The returned function unsubscribes; it
// is idempotent.
func (x *Index) Subscribe(f func(Change)) (unsubscribe func()) { return x.loop.Subscribe(f) }

// Run subscribes to the source and keeps the index up to date until ctx
// is done; then it unsubscribes and returns nil. An index runs once; a
// second call returns an error wrapping registry.ErrAlreadyRunning.
func (x *Index) Run(ctx context.Context) error {
	return x.loop.Run(ctx, x.follow, x.applyBatch, x.current)
}

// follow subscribes to the source, each event a mark, and marks the
// first batch; it returns the unsubscribe.
func (x *Index) follow() (stop func()) {
	mark := x.loop.Mark
	unsubscribe := x.src.Subscribe(registry.HandlerFuncs{
		ServiceFunc:   func(e registry.ServiceEvent) { mark(func(m *marks) { m.services.OnService(e) }) },
		EndpointsFunc: func(e registry.EndpointsEvent) { mark(func(m *marks) { m.services.OnEndpoints(e) }) },
		WorkloadFunc: func(e registry.WorkloadEvent) {
			key, cur := e.Workload().Key(), e.Current
			if e.Type == model.EventDelete {
				cur = nil
			}
			mark(func(m *marks) { m.workloads[key] = cur })
		},
		SyncedFunc: func(registry.SyncedEvent) { mark(func(m *marks) { m.synced = true }) },
		ClusterFunc: func(e registry.ClusterEvent) {
			id := e.Cluster().ID
			mark(func(m *marks) { m.clusters[id] = e.Current })
		},
		NamespaceFunc: func(e registry.NamespaceEvent) {
			key := e.Namespace().Key()
			mark(func(m *marks) { m.namespaces[key] = e.Current })
		},
		GatewayFunc: func(e registry.GatewayEvent) {
			key := e.Gateway().Key()
			mark(func(m *marks) { m.gateways[key] = e.Current })
		},
	})
	// The first snapshot, at generation 1, is published even when the
	// source holds nothing.
	mark(func(m *marks) { m.first = true })
	return unsubscribe
}

// applyBatch applies a batch of marks and publishes the next snapshot
// when anything changed.
func (x *Index) applyBatch(m marks, since time.Time) (Change, bool) {
	s, events := x.apply(m)
	prev := x.snap.Load()
	if len(events) == 0 && s.synced == prev.synced && prev.gen > 0 && sameDiags(s.diags, prev.diags) {
		return Change{}, false
	}
	s.gen = prev.gen + 1
	x.snap.Store(s)
	return Change{Generation: s.gen, Snapshot: s, Events: events, Since: since}, true
}

// current is the index's state as a subscriber's first Change.
func (x *Index) current() Change {
	s := x.snap.Load()
	return Change{Generation: s.gen, Snapshot: s, Initial: true}
}

func sameDiags(a, b []model.Diagnostic) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// workloadAddress and serviceAddress wrap messages as resources.
func workloadAddress(w *workloadapi.Workload) *workloadapi.Address {
	return &workloadapi.Address{Type: &workloadapi.Address_Workload{Workload: w}}
}

func serviceAddress(s *workloadapi.Service) *workloadapi.Address {
	return &workloadapi.Address{Type: &workloadapi.Address_Service{Service: s}}
}

// Settled reports whether the index has applied every change its source
// reported, with nothing pending.
func (x *Index) Settled() bool { return x.loop.Settled() }
