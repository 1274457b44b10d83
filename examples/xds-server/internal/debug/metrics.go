package debug

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the xds-server's Prometheus metrics, in a Prometheus
// registry of their own (never the global default one), so that two
// servers in one process, or two tests, do not share them.
//
// Counters and histograms are fed by the callers (ObservePush,
// AddStreams); gauges of what is served are computed when scraped. The
// registry's own metrics (its sizes, events, lag, diagnostics) are the
// library's, registered in the same Prometheus registry by the
// registries built with it as their Options.Metrics.
type Metrics struct {
	reg     *prometheus.Registry
	pushes  prometheus.Counter
	changes prometheus.Counter
	latency prometheus.Histogram
	streams prometheus.Gauge
}

// Served is what the xDS server serves, as the metrics report it.
type Served struct {
	// Nodes is the number of connected nodes.
	Nodes int
	// Resources is the number of resources served of each type URL,
	// summed over nodes.
	Resources map[string]int
}

// NewMetrics returns the server's metrics in reg (a new registry when
// nil), reporting what served returns (nil for nothing) when scraped.
func NewMetrics(reg *prometheus.Registry, served func() Served) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		reg: reg,
		pushes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meshreg_xds_pushes_total",
			Help: "Pushes: debounced batches of registry changes brought to every connected node.",
		}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meshreg_xds_push_changes_total",
			Help: "Generations of the proxy view the pushes held.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "meshreg_xds_push_duration_seconds",
			Help:    "Time a push took to rebuild and set every node's resources.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10), // 50µs to ~13s
		}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshreg_xds_streams",
			Help: "Open xDS streams.",
		}),
	}
	m.reg.MustRegister(m.pushes, m.changes, m.latency, m.streams, &servedCollector{served: served})
	return m
}

// Registry returns the Prometheus registry the metrics are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObservePush records one push, the view generations it held, and the
// time it took.
func (m *Metrics) ObservePush(changes int, took time.Duration) {
	m.pushes.Inc()
	m.changes.Add(float64(changes))
	m.latency.Observe(took.Seconds())
}

// AddStreams adds delta to the open xDS streams.
func (m *Metrics) AddStreams(delta int) { m.streams.Add(float64(delta)) }

// servedCollector reports what the xDS server serves at scrape time.
type servedCollector struct {
	served func() Served
}

var (
	nodesDesc = prometheus.NewDesc("meshreg_xds_nodes",
		"Connected xDS nodes (by node ID).", nil, nil)
	resourcesDesc = prometheus.NewDesc("meshreg_xds_resources",
		"xDS resources served, summed over connected nodes, by type URL.", []string{"type"}, nil)
)

func (c *servedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodesDesc
	ch <- resourcesDesc
}

func (c *servedCollector) Collect(ch chan<- prometheus.Metric) {
	if c.served == nil {
		return
	}
	served := c.served()
	ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(served.Nodes))
	for typeURL, n := range served.Resources {
		ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(n), typeURL)
	}
}
