package metrics

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Registry is one registry's metrics. Its methods are safe for
// concurrent use, and do nothing on a nil Registry.
type Registry struct {
	reg prometheus.Registerer

	fam *family

	events  *prometheus.CounterVec
	wait    prometheus.Histogram
	lag     *prometheus.HistogramVec
	relists *prometheus.CounterVec
	sync    prometheus.Gauge
}

var _ registry.NotifierObserver = (*Registry)(nil)

// New registers the metrics of a registry with reg, labelled with the
// registry's name (its provider, or "aggregate") and cluster; nil reg
// returns nil, metrics off. Unregister takes them back.
//
// Registries with the same name and cluster on one Registerer share
// their series: a cluster's registry and the one that replaces it (after
// its kubeconfig Secret is rotated, say) run side by side until the new
// one has synced, and the cluster's counters go on across the change
// rather than restart. The state gauges read the older of the two until
// it is unregistered.
func New(reg prometheus.Registerer, name string, cluster model.ClusterID) (*Registry, error) {
	if reg == nil {
		return nil, nil
	}
	l := prometheus.Labels{"registry": name, "cluster": string(cluster)}
	r := &Registry{reg: reg}
	for {
		f := newFamily(l, r)
		err := reg.Register(f)
		if err == nil {
			r.join(f)
			return r, nil
		}
		are := prometheus.AlreadyRegisteredError{}
		if !errors.As(err, &are) {
			return nil, err
		}
		existing, ok := are.ExistingCollector.(*family)
		if !ok {
			return nil, errors.New("metrics: the metrics of " + name + ", cluster " + string(cluster) + " are registered already by another collector")
		}
		if existing.add(r) {
			r.join(existing)
			return r, nil
		}
		// existing was just unregistered by its last member: register
		// anew.
	}
}

func (r *Registry) join(f *family) {
	r.fam = f
	r.events, r.wait, r.lag, r.relists, r.sync = f.events, f.wait, f.lag, f.relists, f.sync
}

// Unregister takes the registry's metrics back from the Registerer, or,
// while another registry of the same labels shares them, leaves them to
// it. A second call does nothing.
func (r *Registry) Unregister() {
	if r == nil || r.fam == nil {
		return
	}
	f := r.fam
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.members, r)
	if i < 0 {
		return
	}
	f.members = slices.Delete(f.members, i, i+1)
	delete(f.states, r)
	if len(f.members) == 0 {
		f.left = true
		r.reg.Unregister(f)
	}
}

// Notified counts an event published.
func (r *Registry) Notified(kind registry.EventKinds) {
	if r != nil {
		r.events.WithLabelValues(kindName(kind)).Inc()
	}
}

// Waited records how long an event waited for its handler.
func (r *Registry) Waited(d time.Duration) {
	if r != nil {
		r.wait.Observe(d.Seconds())
	}
}

// Applied records the lag of a change of an object of a kind, written at
// written; a zero written (the object says nothing) is not recorded.
func (r *Registry) Applied(kind string, written time.Time) {
	if r != nil && !written.IsZero() {
		r.lag.WithLabelValues(kind).Observe(max(time.Since(written), 0).Seconds())
	}
}

// Relisted counts a list of an informer after its first.
func (r *Registry) Relisted(informer string) {
	if r != nil {
		r.relists.WithLabelValues(informer).Inc()
	}
}

// Synced records the time the initial sync took.
func (r *Registry) Synced(d time.Duration) {
	if r != nil {
		r.sync.Set(d.Seconds())
	}
}

func kindName(k registry.EventKinds) string {
	switch k {
	case registry.ServiceEvents:
		return "service"
	case registry.EndpointsEvents:
		return "endpoints"
	case registry.WorkloadEvents:
		return "workload"
	case registry.NetworkGatewayEvents:
		return "gateways"
	case registry.SyncedEvents:
		return "synced"
	}
	return "other"
}

// State is what the state gauges read when scraped.
type State struct {
	// Discovery is the registry's queries.
	Discovery registry.Discovery
	// QueueDepths returns each subscriber's queue depth
	// (registry.Notifier.QueueDepths).
	QueueDepths func() map[uint64]int
	// Pending returns the number of endpoints withheld until their
	// workload is known; nil for a registry that withholds none.
	Pending func() int
	// SyncPending returns what the registry's initial sync waits for
	// (registry.SyncReporter); nil for a registry that does not say.
	SyncPending func() []registry.Pending
}

// Watch has the state gauges read st when scraped, while this registry
// is the oldest of those sharing its labels.
func (r *Registry) Watch(st State) {
	if r == nil {
		return
	}
	r.fam.mu.Lock()
	r.fam.states[r] = st
	r.fam.mu.Unlock()
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
