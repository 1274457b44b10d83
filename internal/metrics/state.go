package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// family is the collector of every registry with one name and cluster
// on one Registerer: its counters, histograms and state gauges. There is
// usually one member; a registry and its replacement overlap while the
// new one syncs, and share it. The state gauges read the oldest member's
// State.
type family struct {
	events  *prometheus.CounterVec
	wait    prometheus.Histogram
	lag     *prometheus.HistogramVec
	relists *prometheus.CounterVec
	sync    prometheus.Gauge
	descs   stateDescs

	// mu guards the fields below.
	mu      sync.Mutex
	members []*Registry // oldest first
	states  map[*Registry]State
	left    bool // unregistered: no member may join
}

func newFamily(l prometheus.Labels, first *Registry) *family {
	return &family{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_events_published_total", Help: "Events the registry published, by kind.", ConstLabels: l,
		}, []string{"kind"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "meshreg_event_wait_seconds", Help: "How long an event waited in a subscriber's queue before its handler was called.",
			ConstLabels: l, Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12),
		}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "meshreg_change_lag_seconds",
			Help:        "From an object's last write on the API server (its managed fields' time) to the registry applying it, by kind of object.",
			ConstLabels: l, Buckets: prometheus.ExponentialBuckets(1e-3, 2, 14),
		}, []string{"kind"}),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_informer_relists_total", Help: "Lists an informer made after its first (after a watch failed or expired), by informer.", ConstLabels: l,
		}, []string{"informer"}),
		sync: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshreg_initial_sync_seconds", Help: "How long the registry took from Run to its initial state reaching its subscribers; 0 until then.", ConstLabels: l,
		}),
		descs:   newStateDescs(l),
		members: []*Registry{first},
		states:  map[*Registry]State{},
	}
}

// add makes r a member, unless the family has left its Registerer.
func (f *family) add(r *Registry) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left {
		return false
	}
	f.members = append(f.members, r)
	return true
}

func (f *family) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.events, f.wait, f.lag, f.relists, f.sync}
}

func (f *family) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range f.collectors() {
		c.Describe(ch)
	}
	f.descs.describe(ch)
}

func (f *family) Collect(ch chan<- prometheus.Metric) {
	for _, c := range f.collectors() {
		c.Collect(ch)
	}
	f.mu.Lock()
	var st State
	found := false
	for _, m := range f.members {
		if st, found = f.states[m]; found {
			break
		}
	}
	f.mu.Unlock()
	if found {
		f.descs.collect(ch, st)
	}
}

// stateDescs are the state gauges, read from a registry when scraped.
type stateDescs struct {
	services, endpoints, workloads, gateways, pending *prometheus.Desc
	diagnostics, depth, syncPending                   *prometheus.Desc
}

func newStateDescs(l prometheus.Labels) stateDescs {
	d := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, vars, l)
	}
	return stateDescs{
		services:    d("meshreg_services", "Services the registry holds."),
		endpoints:   d("meshreg_endpoints", "Endpoints the registry holds, one per workload and service port."),
		workloads:   d("meshreg_workloads", "Workload instances the registry holds."),
		gateways:    d("meshreg_network_gateways", "Network gateways the registry knows."),
		pending:     d("meshreg_endpoints_pending", "Endpoints withheld until their workload (pod) is known."),
		diagnostics: d("meshreg_diagnostics", "Diagnostics: what the registry refused or could not fully use, by severity and kind of object.", "severity", "kind"),
		depth:       d("meshreg_subscriber_queue_depth", "Events queued for a subscriber and not yet handled, by subscription number.", "subscriber"),
		syncPending: d("meshreg_sync_pending", "1 for each thing the registry's initial sync waits for: the registry that waits (the aggregate's members, or itself), the reason (not running, initial list, source, initial state, settling) and, for an informer's initial list, the kind of object; no series once synced.",
			"pending_registry", "pending_cluster", "reason", "kind"),
	}
}

func (c stateDescs) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.services, c.endpoints, c.workloads, c.gateways, c.pending, c.diagnostics, c.depth, c.syncPending} {
		ch <- d
	}
}

func (c stateDescs) collect(ch chan<- prometheus.Metric, st State) {
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	d := st.Discovery
	svcs := d.Services()
	n := 0
	for _, s := range svcs {
		n += len(d.Endpoints(s.Key(), registry.EndpointQuery{}))
	}
	gauge(c.services, len(svcs))
	gauge(c.endpoints, n)
	gauge(c.workloads, len(d.Workloads()))
	if gd, ok := d.(registry.GatewayDiscovery); ok {
		gauge(c.gateways, len(gd.NetworkGateways()))
	} else {
		gauge(c.gateways, 0)
	}
	if st.Pending != nil {
		gauge(c.pending, st.Pending())
	} else {
		gauge(c.pending, 0)
	}
	type sevKind struct{ sev, kind string }
	counts := map[sevKind]int{}
	for _, dg := range d.Diagnostics() {
		counts[sevKind{dg.Severity.String(), dg.Kind}]++
	}
	for k, v := range counts {
		gauge(c.diagnostics, v, k.sev, k.kind)
	}
	if st.QueueDepths != nil {
		for id, depth := range st.QueueDepths() {
			gauge(c.depth, depth, itoa(id))
		}
	}
	if st.SyncPending != nil {
		for _, p := range registry.SortPending(st.SyncPending()) {
			who := "aggregate"
			if p.Shard != (model.ShardKey{}) {
				who = p.Shard.Provider.String()
			}
			gauge(c.syncPending, 1, who, string(p.Shard.Cluster), p.Reason.String(), p.Kind)
		}
	}
}
