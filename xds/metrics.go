package xds

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a Server's Prometheus metrics. A nil *metrics is off:
// every method does nothing.
type metrics struct {
	pushes    prometheus.Counter
	changes   prometheus.Counter
	duration  prometheus.Histogram
	streams   *prometheus.GaugeVec
	responses *prometheus.CounterVec
	nacks     *prometheus.CounterVec
}

// newMetrics registers a server's metrics with reg; nil (and no error)
// when reg is nil. counts is read when scraped.
func newMetrics(reg prometheus.Registerer, counts func() (int, map[string]int)) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		pushes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meshreg_xds_pushes_total",
			Help: "Pushes: debounced batches of the proxy view's changes brought to every connected node.",
		}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "meshreg_xds_push_changes_total",
			Help: "Generations of the proxy view the pushes held.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "meshreg_xds_push_duration_seconds",
			Help:    "Time a push took to translate and set every connected node's resources.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10), // 50µs to about 13s
		}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meshreg_xds_streams",
			Help: "Open ADS streams whose node registered, by kind of client (envoy, grpc).",
		}, []string{"client"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_xds_responses_total",
			Help: "ADS responses sent, by type URL.",
		}, []string{"type"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_xds_nacks_total",
			Help: "Requests that rejected what they were sent (NACKs), by type URL.",
		}, []string{"type"}),
	}
	cs := []prometheus.Collector{m.pushes, m.changes, m.duration, m.streams, m.responses, m.nacks, servedCollector{counts}}
	var errs []error
	for _, c := range cs {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		for _, c := range cs {
			reg.Unregister(c)
		}
		return nil, err
	}
	for _, c := range []Client{Envoy, GRPC} {
		m.streams.WithLabelValues(c.String())
	}
	for _, url := range typeURLs {
		m.responses.WithLabelValues(url)
		m.nacks.WithLabelValues(url)
	}
	return m, nil
}

func (m *metrics) pushed(changes int, took time.Duration) {
	if m == nil {
		return
	}
	m.pushes.Inc()
	m.changes.Add(float64(changes))
	m.duration.Observe(took.Seconds())
}

func (m *metrics) streamOpened(c Client) {
	if m != nil {
		m.streams.WithLabelValues(c.String()).Inc()
	}
}

func (m *metrics) streamClosed(c Client) {
	if m != nil {
		m.streams.WithLabelValues(c.String()).Dec()
	}
}

func (m *metrics) responded(typeURL string) {
	if m != nil {
		m.responses.WithLabelValues(typeURL).Inc()
	}
}

func (m *metrics) nacked(typeURL string) {
	if m != nil {
		m.nacks.WithLabelValues(typeURL).Inc()
	}
}

// servedCollector reports what the server serves when scraped.
type servedCollector struct {
	counts func() (int, map[string]int)
}

var (
	nodesDesc = prometheus.NewDesc("meshreg_xds_nodes",
		"Connected nodes (by node ID).", nil, nil)
	resourcesDesc = prometheus.NewDesc("meshreg_xds_resources",
		"Resources served, summed over connected nodes, by type URL.", []string{"type"}, nil)
)

func (c servedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodesDesc
	ch <- resourcesDesc
}

func (c servedCollector) Collect(ch chan<- prometheus.Metric) {
	nodes, resources := c.counts()
	ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(nodes))
	for typeURL, n := range resources {
		ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(n), typeURL)
	}
}
