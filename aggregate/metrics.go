package aggregate

import "github.com/meshreg/meshreg/internal/metrics"

// newMetrics registers the aggregate's metrics (Options.Metrics) over its
// global store; nil when off, or when the Registerer refuses them, which
// is logged.
func (c *Controller) newMetrics() *metrics.Registry {
	m, err := metrics.New(c.opts.Metrics, "aggregate", "")
	if err != nil {
		c.opts.Logger.Error("aggregate metrics not registered", "err", err)
		return nil
	}
	if m != nil {
		c.global.st.observe(m)
		m.Watch(metrics.State{Discovery: c, QueueDepths: c.global.st.queueDepths})
	}
	return m
}
