package xds_test

import (
	"context"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/xds"
)

// TestMetrics makes every metric of the server move: a gRPC client's
// stream opens, is answered, NACKs, is pushed a change and closes.
func TestMetrics(t *testing.T) {
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	prom := prometheus.NewRegistry()
	s := startScenarioWith(t, func(r *memory.Registry) {
		r.AddService(echo)
		r.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	}, xds.Options{Metrics: prom})
	gathered := func(name string, labels ...string) float64 {
		t.Helper()
		return metricOf(t, prom, name, labels...)
	}
	if got := gathered("meshreg_xds_streams", "client", "grpc"); got != 0 {
		t.Fatalf("streams before any client = %v", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := s.ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := node("m", map[string]any{xds.MetadataNamespace: "default", xds.MetadataGenerator: "grpc"})
	name := xds.ClusterName(echo.Hostname, 8080)
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name}}); err != nil {
		t.Fatal(err)
	}
	_, resp := recvCLAs(t, stream.Recv)
	if got := gathered("meshreg_xds_streams", "client", "grpc"); got != 1 {
		t.Errorf(`meshreg_xds_streams{client="grpc"} = %v with one stream open, want 1`, got)
	}
	if got := gathered("meshreg_xds_streams", "client", "envoy"); got != 0 {
		t.Errorf(`meshreg_xds_streams{client="envoy"} = %v, want 0`, got)
	}
	if got := gathered("meshreg_xds_responses_total", "type", resourcev3.EndpointType); got != 1 {
		t.Errorf("responses of load assignments = %v after one, want 1", got)
	}
	if got := gathered("meshreg_xds_nodes"); got != 1 {
		t.Errorf("meshreg_xds_nodes = %v, want 1", got)
	}
	// A gRPC client of one port is served a listener, a route, a
	// cluster and a load assignment.
	if got := gathered("meshreg_xds_resources", "type", resourcev3.ClusterType); got != 1 {
		t.Errorf("clusters served = %v, want 1", got)
	}

	// A NACK.
	if err := stream.Send(&discoveryv3.DiscoveryRequest{
		TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name}, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Message: "no"},
	}); err != nil {
		t.Fatal(err)
	}
	eventuallyMetric(t, prom, 1, "meshreg_xds_nacks_total", "type", resourcev3.EndpointType)

	// A change is pushed.
	pushes := gathered("meshreg_xds_pushes_total")
	changes := gathered("meshreg_xds_push_changes_total")
	pushDurations := gathered("meshreg_xds_push_duration_seconds")
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	recvCLAs(t, stream.Recv)
	eventuallyMetric(t, prom, pushes+1, "meshreg_xds_pushes_total")
	if got := gathered("meshreg_xds_push_changes_total"); got <= changes {
		t.Errorf("push changes = %v after a change, was %v", got, changes)
	}
	if got := gathered("meshreg_xds_push_duration_seconds"); got <= pushDurations {
		t.Errorf("push durations observed = %v after a push, was %v", got, pushDurations)
	}
	if got := gathered("meshreg_xds_responses_total", "type", resourcev3.EndpointType); got != 2 {
		t.Errorf("responses of load assignments = %v after two, want 2", got)
	}

	// The stream closes.
	cancel()
	eventuallyMetric(t, prom, 0, "meshreg_xds_streams", "client", "grpc")
	eventuallyMetric(t, prom, 0, "meshreg_xds_nodes")
}

// metricOf returns the value of the series of name with the given label
// pairs in reg: a counter's or gauge's value, a histogram's sample count;
// 0 when there is none.
func metricOf(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// eventuallyMetric waits for a series to have the value want.
func eventuallyMetric(t *testing.T, reg *prometheus.Registry, want float64, name string, labels ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := metricOf(t, reg, name, labels...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %v, want %v", name, labels, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
