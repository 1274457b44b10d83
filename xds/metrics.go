package xds

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/internal/servemetrics"
)

// metrics are a Server's Prometheus metrics: those it shares with WDS
// (package servemetrics) and its pushes'. A nil *metrics is off: every
// method does nothing.
type metrics struct {
	shared   *servemetrics.Metrics
	pushes   prometheus.Counter
	changes  prometheus.Counter
	duration prometheus.Histogram
}

// newMetrics registers a server's metrics with reg; nil (and no error)
// when reg is nil. counts is read when scraped.
func newMetrics(reg prometheus.Registerer, counts func() (int, map[string]int)) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	shared, err := servemetrics.New(reg)
	if err != nil {
		return nil, err
	}
	m := &metrics{
		shared: shared,
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
	}
	cs := []prometheus.Collector{m.pushes, m.changes, m.duration, servedCollector{counts}}
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
	shared.Clients(Envoy.String(), GRPC.String())
	shared.TypeURLs(typeURLs[:]...)
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
		m.shared.StreamOpened(c.String())
	}
}

func (m *metrics) streamClosed(c Client) {
	if m != nil {
		m.shared.StreamClosed(c.String())
	}
}

func (m *metrics) pending(c Client, delta int) {
	if m != nil {
		m.shared.Pending(c.String(), delta)
	}
}

func (m *metrics) responded(typeURL string, resources int, since time.Time) {
	if m != nil {
		m.shared.Responded(typeURL, resources, since)
	}
}

func (m *metrics) nacked(typeURL string) {
	if m != nil {
		m.shared.Nacked(typeURL)
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
