package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/registry"
)

// stateCollector reads a registry's state when scraped.
type stateCollector struct {
	st                                                State
	services, endpoints, workloads, gateways, pending *prometheus.Desc
	diagnostics, depth                                *prometheus.Desc
}

func newStateCollector(l prometheus.Labels, st State) *stateCollector {
	d := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, vars, l)
	}
	return &stateCollector{
		st:          st,
		services:    d("meshreg_services", "Services the registry holds."),
		endpoints:   d("meshreg_endpoints", "Endpoints the registry holds, one per workload and service port."),
		workloads:   d("meshreg_workloads", "Workload instances the registry holds."),
		gateways:    d("meshreg_network_gateways", "Network gateways the registry knows."),
		pending:     d("meshreg_endpoints_pending", "Endpoints withheld until their workload (pod) is known."),
		diagnostics: d("meshreg_diagnostics", "Diagnostics: what the registry refused or could not fully use, by severity and kind of object.", "severity", "kind"),
		depth:       d("meshreg_subscriber_queue_depth", "Events queued for a subscriber and not yet handled, by subscription number.", "subscriber"),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.services, c.endpoints, c.workloads, c.gateways, c.pending, c.diagnostics, c.depth} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	d := c.st.Discovery
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
	if c.st.Pending != nil {
		gauge(c.pending, c.st.Pending())
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
	if c.st.QueueDepths != nil {
		for id, depth := range c.st.QueueDepths() {
			gauge(c.depth, depth, itoa(id))
		}
	}
}
