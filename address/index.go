package address

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/internal/workqueue"
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
	// Events are the resources added, changed and removed, sorted by
	// key; empty for the generation that only turns Synced true.
	Events []Event
}

// Index is the address index of a registry, usually the aggregate: the
// workloads and services ztunnel reads, keyed by uid, "network/IP" and
// "namespace/hostname". Run keeps it up to date; each state it publishes
// is a Snapshot with the next generation. It is safe for concurrent use.
//
// The index follows the source's events and takes what they carry: a
// service event's service, a workload event's workload, the fact that a
// service's endpoints changed, and the cluster metadata (networks,
// namespaces, Gateway API Gateways) of a registry.MetadataDiscovery
// source, which the kube registries and the aggregate publish. Run's
// goroutine applies them, reading the marked services' endpoints from
// the source, never inside a lock of the index's, and rebuilds only what
// they touch.
type Index struct {
	src  registry.Reader
	opts Options

	snap    atomic.Pointer[Snapshot]
	running atomic.Bool
	in      *workqueue.Queue[marks]

	mu          sync.Mutex
	subscribers map[int]func(Change)
	nextID      int

	// st is the index's own state; only Run's goroutine uses it.
	st *state
}

// marks are what changed in the source since apply last looked.
type marks struct {
	services  map[model.ServiceKey]serviceMark
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

type serviceMark struct {
	// service says a service event came; svc is the service as the
	// latest left it, nil once deleted.
	service bool
	svc     *model.Service
	// endpoints says an endpoints event came.
	endpoints bool
}

func newMarks() marks {
	return marks{services: map[model.ServiceKey]serviceMark{}, workloads: map[model.WorkloadKey]*model.WorkloadInstance{},
		clusters: map[model.ClusterID]*model.Cluster{}, namespaces: map[model.NamespaceKey]*model.Namespace{},
		gateways: map[model.GatewayKey]*model.Gateway{}}
}

func (m *marks) empty() bool {
	return len(m.services) == 0 && len(m.workloads) == 0 && len(m.clusters) == 0 && len(m.namespaces) == 0 &&
		len(m.gateways) == 0 && !m.first && !m.synced
}

// New returns the address index of src; Run starts it. The error wraps
// ErrInvalidOptions.
func New(src registry.Reader, opts Options) (*Index, error) {
	o, err := opts.defaults()
	if err != nil {
		return nil, err
	}
	x := &Index{
		src:         src,
		opts:        o,
		in:          workqueue.New(newMarks(), (*marks).empty),
		subscribers: map[int]func(Change){},
		st:          newState(),
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

// Subscribe registers f to be called with each generation's Change, after
// its snapshot is published, on Run's goroutine, one call at a time: f
// must return quickly. f is called for the generations published after
// Subscribe returns; the state before them is Snapshot(), read after
// subscribing (a generation f also hears of may already be in it). The
// returned function unsubscribes; it is idempotent.
func (x *Index) Subscribe(f func(Change)) (unsubscribe func()) {
	x.mu.Lock()
	id := x.nextID
	x.nextID++
	x.subscribers[id] = f
	x.mu.Unlock()
	return func() {
		x.mu.Lock()
		delete(x.subscribers, id)
		x.mu.Unlock()
	}
}

// Run subscribes to the source and keeps the index up to date until ctx
// is done; then it unsubscribes and returns nil. An
// index runs once; a second call returns an error wrapping
// registry.ErrAlreadyRunning.
func (x *Index) Run(ctx context.Context) error {
	if !x.running.CompareAndSwap(false, true) {
		return fmt.Errorf("address: %w", registry.ErrAlreadyRunning)
	}
	unsubscribe := x.src.Subscribe(registry.HandlerFuncs{
		ServiceFunc: func(e registry.ServiceEvent) {
			key := e.Service().Key()
			x.in.Add(func(m *marks) {
				sm := m.services[key]
				sm.service, sm.svc = true, e.Current
				m.services[key] = sm
			})
		},
		EndpointsFunc: func(e registry.EndpointsEvent) {
			x.in.Add(func(m *marks) {
				sm := m.services[e.Service]
				sm.endpoints = true
				m.services[e.Service] = sm
			})
		},
		WorkloadFunc: func(e registry.WorkloadEvent) {
			key, cur := e.Workload().Key(), e.Current
			if e.Type == model.EventDelete {
				cur = nil
			}
			x.in.Add(func(m *marks) { m.workloads[key] = cur })
		},
		SyncedFunc: func(registry.SyncedEvent) { x.in.Add(func(m *marks) { m.synced = true }) },
		ClusterFunc: func(e registry.ClusterEvent) {
			id := e.Cluster().ID
			x.in.Add(func(m *marks) { m.clusters[id] = e.Current })
		},
		NamespaceFunc: func(e registry.NamespaceEvent) {
			key := e.Namespace().Key()
			x.in.Add(func(m *marks) { m.namespaces[key] = e.Current })
		},
		GatewayFunc: func(e registry.GatewayEvent) {
			key := e.Gateway().Key()
			x.in.Add(func(m *marks) { m.gateways[key] = e.Current })
		},
	})
	defer unsubscribe()
	// The first snapshot, at generation 1, is published even when the
	// source holds nothing.
	x.in.Add(func(m *marks) { m.first = true })
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-x.in.Wake():
		}
		if x.opts.Debounce > 0 {
			t := time.NewTimer(x.opts.Debounce)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		x.publish(x.apply(x.in.Take(newMarks())))
		x.in.Done()
	}
}

// publish stores the next snapshot and tells the subscribers.
func (x *Index) publish(s *Snapshot, events []Event) {
	prev := x.snap.Load()
	if len(events) == 0 && s.synced == prev.synced && prev.gen > 0 && sameDiags(s.diags, prev.diags) {
		return
	}
	s.gen = prev.gen + 1
	x.snap.Store(s)
	x.mu.Lock()
	fs := make([]func(Change), 0, len(x.subscribers))
	for _, f := range x.subscribers {
		fs = append(fs, f)
	}
	x.mu.Unlock()
	for _, f := range fs {
		f(Change{Generation: s.gen, Snapshot: s, Events: events})
	}
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
func (x *Index) Settled() bool { return x.in.Idle() }
