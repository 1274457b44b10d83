package servemetrics_test

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/internal/servemetrics"
)

// Two servers on one Registerer feed the same series.
func Example() {
	reg := prometheus.NewRegistry()
	eds, _ := servemetrics.New(reg)
	wds, err := servemetrics.New(reg)
	if err != nil {
		panic(err)
	}
	eds.StreamOpened("envoy")
	wds.StreamOpened("ztunnel")
	eds.Responded("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", 3, time.Now())
	wds.Responded("type.googleapis.com/istio.workload.Address", 2, time.Time{})
	fams, _ := reg.Gather()
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetGauge() != nil:
				fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetGauge().GetValue())
			case m.GetCounter() != nil:
				fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
			case m.GetHistogram() != nil:
				fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetHistogram().GetSampleCount())
			}
		}
	}
	// Output:
	// meshreg_xds_change_to_response_seconds type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment 1
	// meshreg_xds_resources_sent_total type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment 3
	// meshreg_xds_resources_sent_total type.googleapis.com/istio.workload.Address 2
	// meshreg_xds_responses_total type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment 1
	// meshreg_xds_responses_total type.googleapis.com/istio.workload.Address 1
	// meshreg_xds_streams envoy 1
	// meshreg_xds_streams ztunnel 1
}
