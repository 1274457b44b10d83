package aggregate

import "github.com/meshreg/meshreg/internal/metrics"

// newMetrics registers the aggregate's metrics (Options.Metrics) over its
// global store; nil when off, or when the Registerer refuses them, which
// is logged.
func (c *Controller) newMetrics() *metrics.Registry {
	m, err := metrics.New(c.opts.Metrics, "aggregate", "")
	if err == nil && m != nil {
		c.global.st.observe(m)
		err = m.Watch(metrics.State{Discovery: c, QueueDepths: c.global.st.queueDepths})
	}
	if err != nil {
		c.opts.Logger.Error("aggregate metrics not registered", "err", err)
		m.Unregister()
		return nil
	}
	return m
}
