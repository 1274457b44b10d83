package servemetrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the series an xDS server feeds.
type Metrics struct {
	streams   *prometheus.GaugeVec
	pending   *prometheus.GaugeVec
	responses *prometheus.CounterVec
	sent      *prometheus.CounterVec
	nacks     *prometheus.CounterVec
	delay     *prometheus.HistogramVec
}

// New returns the metrics registered on reg, or taken from it where
// another server registered them first; nil, and no error, when reg is
// nil. An error is reg refusing them otherwise; then nothing is left
// registered.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &Metrics{
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meshreg_xds_streams",
			Help: "Open xDS streams whose client is known, by kind of client (envoy, grpc, ztunnel).",
		}, []string{"client"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "meshreg_xds_pending",
			Help: "Changes not yet sent: the resource types with a change their client has not been sent yet, per node (envoy, grpc) or stream (ztunnel).",
		}, []string{"client"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_xds_responses_total",
			Help: "xDS responses sent, by type URL.",
		}, []string{"type"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_xds_resources_sent_total",
			Help: "Resources sent in xDS responses (removals not counted), by type URL.",
		}, []string{"type"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshreg_xds_nacks_total",
			Help: "Requests that rejected what they were sent (NACKs), by type URL.",
		}, []string{"type"}),
		delay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "meshreg_xds_change_to_response_seconds",
			Help:    "From a registry change reaching the proxy view or address index to the first response that carries it, by type URL.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1ms to about 33s
		}, []string{"type"}),
	}
	var (
		registered []prometheus.Collector
		errs       = make([]error, 6)
	)
	m.streams, errs[0] = share(reg, m.streams, &registered)
	m.pending, errs[1] = share(reg, m.pending, &registered)
	m.responses, errs[2] = share(reg, m.responses, &registered)
	m.sent, errs[3] = share(reg, m.sent, &registered)
	m.nacks, errs[4] = share(reg, m.nacks, &registered)
	m.delay, errs[5] = share(reg, m.delay, &registered)
	if err := errors.Join(errs...); err != nil {
		for _, c := range registered {
			reg.Unregister(c)
		}
		return nil, err
	}
	return m, nil
}

// share registers c on reg, appending it to registered; when a
// collector of the same series is registered already, it returns that
// one instead.
func share[C prometheus.Collector](reg prometheus.Registerer, c C, registered *[]prometheus.Collector) (C, error) {
	err := reg.Register(c)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err == nil {
		*registered = append(*registered, c)
	}
	return c, err
}

// Clients makes the series of the given client kinds exist at zero
// before anything happens.
func (m *Metrics) Clients(clients ...string) {
	if m == nil {
		return
	}
	for _, c := range clients {
		m.streams.WithLabelValues(c)
		m.pending.WithLabelValues(c)
	}
}

// TypeURLs makes the series of the given types exist at zero.
func (m *Metrics) TypeURLs(types ...string) {
	if m == nil {
		return
	}
	for _, t := range types {
		m.responses.WithLabelValues(t)
		m.sent.WithLabelValues(t)
		m.nacks.WithLabelValues(t)
		m.delay.WithLabelValues(t)
	}
}

// StreamOpened counts a stream of a client kind open.
func (m *Metrics) StreamOpened(client string) {
	if m != nil {
		m.streams.WithLabelValues(client).Inc()
	}
}

// StreamClosed counts it closed.
func (m *Metrics) StreamClosed(client string) {
	if m != nil {
		m.streams.WithLabelValues(client).Dec()
	}
}

// Pending adds delta to the changes of a client kind not yet sent.
func (m *Metrics) Pending(client string, delta int) {
	if m != nil {
		m.pending.WithLabelValues(client).Add(float64(delta))
	}
}

// Responded counts a response of a type holding resources resources;
// since, when not zero, is when the oldest change it carries reached the
// view or index.
func (m *Metrics) Responded(typeURL string, resources int, since time.Time) {
	if m == nil {
		return
	}
	m.responses.WithLabelValues(typeURL).Inc()
	m.sent.WithLabelValues(typeURL).Add(float64(resources))
	if !since.IsZero() {
		m.delay.WithLabelValues(typeURL).Observe(time.Since(since).Seconds())
	}
}

// Nacked counts a request that rejected a response of a type.
func (m *Metrics) Nacked(typeURL string) {
	if m != nil {
		m.nacks.WithLabelValues(typeURL).Inc()
	}
}
