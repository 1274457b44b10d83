package aggregate

import "github.com/meshreg/meshreg/internal/metrics"

// newMetrics registers the aggregate's metrics (Options.Metrics) over its
// global store; nil when off. A Registerer that refuses them is an
// error.
func (c *Controller) newMetrics() (*metrics.Registry, error) {
	m, err := metrics.New(c.opts.Metrics, "aggregate", "")
	if err != nil || m == nil {
		return nil, err
	}
	c.global.st.Observe(m)
	m.Watch(metrics.State{Discovery: c, QueueDepths: c.global.st.QueueDepths, SyncPending: c.PendingSync})
	return m, nil
}
