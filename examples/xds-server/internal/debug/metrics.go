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
// Counters and histograms are fed by the callers (ObserveEvent,
// AddStreams); gauges of the registry's size are computed from the
// registry when scraped.
type Metrics struct {
	reg     *prometheus.Registry
	events  *prometheus.CounterVec
	latency *prometheus.HistogramVec
	streams prometheus.Gauge
}

// NewMetrics returns metrics that report src's sizes when scraped, and
// the xDS resources of each type that resources returns (nil for none).
func NewMetrics(src registry.Discovery, resources func() map[string]int) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_xds_registry_events_total",
			Help: "Registry events handled by the xDS updater, by kind (service, endpoints, workload).",
		}, []string{"kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "meshreg_xds_handler_duration_seconds",
			Help:    "Time the xDS updater took to handle a registry event, by kind.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10), // 50µs to ~13s
		}, []string{"kind"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshreg_xds_streams",
			Help: "Open xDS streams.",
		}),
	}
	m.reg.MustRegister(m.events, m.latency, m.streams, &registryCollector{src: src, resources: resources})
	return m
}

// Registry returns the Prometheus registry the metrics are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveEvent records one handled registry event of a kind and the time
// handling it took.
func (m *Metrics) ObserveEvent(kind string, took time.Duration) {
	m.events.WithLabelValues(kind).Inc()
	m.latency.WithLabelValues(kind).Observe(took.Seconds())
}

// AddStreams adds delta to the open xDS streams.
func (m *Metrics) AddStreams(delta int) { m.streams.Add(float64(delta)) }

// registryCollector reports a registry's sizes at scrape time.
type registryCollector struct {
	src       registry.Discovery
	resources func() map[string]int
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
	resourcesDesc = prometheus.NewDesc("meshreg_xds_resources",
		"xDS resources served, by type URL.", []string{"type"}, nil)
)

func (c *registryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{servicesDesc, endpointsDesc, workloadsDesc, diagnosticsDesc, pendingDesc, resourcesDesc} {
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
	if c.resources != nil {
		for typeURL, n := range c.resources() {
			ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(n), typeURL)
		}
	}
}
