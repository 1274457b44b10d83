package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/internal/metrics"
	"github.com/meshreg/meshreg/registry"
)

// A registry's metrics: nil without a Registerer, and then every call
// costs a nil check.
func Example() {
	off, _ := metrics.New(nil, "Kubernetes", "east")
	off.Notified(registry.ServiceEvents) // does nothing

	reg := prometheus.NewRegistry()
	on, err := metrics.New(reg, "Kubernetes", "east")
	if err != nil {
		panic(err)
	}
	on.Notified(registry.ServiceEvents)
	fams, _ := reg.Gather()
	for _, f := range fams {
		if f.GetName() == "meshreg_events_published_total" {
			fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	fmt.Println(off == nil)
	// Output:
	// meshreg_events_published_total 1
	// true
}
