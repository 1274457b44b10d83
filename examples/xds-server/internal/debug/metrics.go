package debug

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Metrics are the xds-server's Prometheus metrics, in a Prometheus
// registry of their own (never the global default one), so that two
// servers in one process, or two tests, do not share them.
//
// Counters and histograms are fed by the callers (ObservePush,
// AddStreams); gauges of the registry's size and of what is served are
// computed when scraped.
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

// NewMetrics returns metrics that report src's sizes when scraped, and
// what served returns (nil for nothing).
func NewMetrics(src registry.Discovery, served func() Served) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
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
	m.reg.MustRegister(m.pushes, m.changes, m.latency, m.streams, &registryCollector{src: src, served: served})
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

// registryCollector reports a registry's sizes at scrape time.
type registryCollector struct {
	src    registry.Discovery
	served func() Served
}

var (
	servicesDesc = prometheus.NewDesc("meshreg_registry_services",
		"Services in the registry.", nil, nil)
	endpointsDesc = prometheus.NewDesc("meshreg_registry_endpoints",
		"Endpoints of the registry's services, one per workload and service port.", nil, nil)
	workloadsDesc = prometheus.NewDesc("meshreg_registry_workloads",
		"Workload instances (Pods and WorkloadEntries) in the registry.", nil, nil)
	diagnosticsDesc = prometheus.NewDesc("meshreg_registry_diagnostics",
		"Diagnostics the registry reports, by severity.", []string{"severity"}, nil)
	pendingDesc = prometheus.NewDesc("meshreg_registry_pending_endpoints",
		"Endpoints withheld until their workload is known: diagnostics whose message says pending.", nil, nil)
	nodesDesc = prometheus.NewDesc("meshreg_xds_nodes",
		"Connected xDS nodes (by node ID).", nil, nil)
	resourcesDesc = prometheus.NewDesc("meshreg_xds_resources",
		"xDS resources served, summed over connected nodes, by type URL.", []string{"type"}, nil)
)

func (c *registryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{servicesDesc, endpointsDesc, workloadsDesc, diagnosticsDesc, pendingDesc, nodesDesc, resourcesDesc} {
		ch <- d
	}
}

func (c *registryCollector) Collect(ch chan<- prometheus.Metric) {
	svcs := c.src.Services()
	eps := 0
	for _, svc := range svcs {
		eps += len(c.src.Endpoints(svc.Key(), registry.EndpointQuery{}))
	}
	ch <- prometheus.MustNewConstMetric(servicesDesc, prometheus.GaugeValue, float64(len(svcs)))
	ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(eps))
	ch <- prometheus.MustNewConstMetric(workloadsDesc, prometheus.GaugeValue, float64(len(c.src.Workloads())))

	bySeverity := map[model.Severity]int{model.Warning: 0, model.Error: 0}
	pending := 0
	for _, d := range c.src.Diagnostics() {
		bySeverity[d.Severity]++
		if strings.Contains(d.Message, "pending") {
			pending++
		}
	}
	for sev, n := range bySeverity {
		ch <- prometheus.MustNewConstMetric(diagnosticsDesc, prometheus.GaugeValue, float64(n), sev.String())
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(pending))
	if c.served != nil {
		served := c.served()
		ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(served.Nodes))
		for typeURL, n := range served.Resources {
			ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(n), typeURL)
		}
	}
}
