package metrics

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Registry is one registry's metrics. Its methods are safe for
// concurrent use, and do nothing on a nil Registry.
type Registry struct {
	reg        prometheus.Registerer
	labels     prometheus.Labels
	collectors []prometheus.Collector

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
func New(reg prometheus.Registerer, name string, cluster model.ClusterID) (*Registry, error) {
	if reg == nil {
		return nil, nil
	}
	l := prometheus.Labels{"registry": name, "cluster": string(cluster)}
	r := &Registry{reg: reg, labels: l}
	r.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meshreg_events_published_total", Help: "Events the registry published, by kind.", ConstLabels: l,
	}, []string{"kind"})
	r.wait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "meshreg_event_wait_seconds", Help: "How long an event waited in a subscriber's queue before its handler was called.",
		ConstLabels: l, Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12),
	})
	r.lag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "meshreg_change_lag_seconds",
		Help:        "From an object's last write on the API server (its managed fields' time) to the registry applying it, by kind of object.",
		ConstLabels: l, Buckets: prometheus.ExponentialBuckets(1e-3, 2, 14),
	}, []string{"kind"})
	r.relists = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meshreg_informer_relists_total", Help: "Lists an informer made after its first (after a watch failed or expired), by informer.", ConstLabels: l,
	}, []string{"informer"})
	r.sync = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "meshreg_initial_sync_seconds", Help: "How long the registry took from Run to its initial state reaching its subscribers; 0 until then.", ConstLabels: l,
	})
	for _, c := range []prometheus.Collector{r.events, r.wait, r.lag, r.relists, r.sync} {
		if err := r.register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Registry) register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		r.Unregister()
		if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
			return errors.New("metrics: a registry with these labels (" + r.labels["registry"] + ", cluster " + r.labels["cluster"] + ") is registered already")
		}
		return err
	}
	r.collectors = append(r.collectors, c)
	return nil
}

// Unregister takes the registry's metrics back from the Registerer.
func (r *Registry) Unregister() {
	if r == nil {
		return
	}
	for _, c := range r.collectors {
		r.reg.Unregister(c)
	}
	r.collectors = nil
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
}

// Watch registers the state gauges over st.
func (r *Registry) Watch(st State) error {
	if r == nil {
		return nil
	}
	return r.register(newStateCollector(r.labels, st))
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
