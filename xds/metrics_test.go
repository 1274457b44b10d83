package xds_test

import (
	"context"
	"slices"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/meshreg/meshreg/internal/promtest"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/xds"
)

// TestMetrics makes every metric of the server move: a gRPC client's
// stream opens and is answered; a change to a resource it does not
// subscribe to owes it nothing; a change to one it does is owed while
// the client holds its acknowledgement back, and sent with its delay
// once it NACKs; then the stream closes.
func TestMetrics(t *testing.T) {
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	other := memory.Service("other", "default").Port("grpc", 8080).Build()
	prom := prometheus.NewRegistry()
	s := startScenarioWith(t, func(r *memory.Registry) {
		r.AddService(echo, other)
		r.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
		r.SetEndpoints(other.Key(), memory.Endpoint("10.0.1.1", 9000).Port("grpc").Build())
	}, xds.Options{Metrics: prom})
	value := func(name string, labels ...string) float64 {
		t.Helper()
		return promtest.Value(t, prom, name, labels...)
	}
	cla := []string{"type", resourcev3.EndpointType}
	grpcClient := []string{"client", "grpc"}
	if got := value("meshreg_xds_streams", grpcClient...); got != 0 {
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
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"meshreg_xds_streams", grpcClient, 1},
		{"meshreg_xds_streams", []string{"client", "envoy"}, 0},
		{"meshreg_xds_responses_total", cla, 1},
		{"meshreg_xds_resources_sent_total", cla, 1},
		{"meshreg_xds_nodes", nil, 1},
		// A gRPC client is served a listener, a route, a cluster and a
		// load assignment per port of each service it sees.
		{"meshreg_xds_resources", []string{"type", resourcev3.ClusterType}, 2},
		{"meshreg_xds_pending", grpcClient, 0},
		// The first response answers a request: it carries no change.
		{"meshreg_xds_change_to_response_seconds", cla, 0},
	} {
		if got := value(c.name, c.labels...); got != c.want {
			t.Errorf("after the first response: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	// A change to a resource the client does not subscribe to owes it
	// nothing.
	pushes := value("meshreg_xds_pushes_total")
	changes := value("meshreg_xds_push_changes_total")
	durations := value("meshreg_xds_push_duration_seconds")
	s.reg.SetEndpoints(other.Key(), memory.Endpoint("10.0.1.2", 9000).Port("grpc").Build())
	// The push's duration is recorded last.
	promtest.Eventually(t, prom, durations+1, "meshreg_xds_push_duration_seconds")
	if got := value("meshreg_xds_pushes_total"); got != pushes+1 {
		t.Errorf("pushes = %v after a change, want %v", got, pushes+1)
	}
	if got := value("meshreg_xds_push_changes_total"); got <= changes {
		t.Errorf("push changes = %v after a change, was %v", got, changes)
	}
	if got := value("meshreg_xds_pending", grpcClient...); got != 0 {
		t.Errorf("pending after a change the client does not subscribe to = %v, want 0", got)
	}

	// A change to one it does, while the client has not acknowledged
	// the last response (a state-of-the-world stream is sent nothing
	// until it does): owed.
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	promtest.Eventually(t, prom, durations+2, "meshreg_xds_push_duration_seconds")
	if got := value("meshreg_xds_pending", grpcClient...); got != 1 {
		t.Errorf("pending with a change held back = %v, want 1", got)
	}
	time.Sleep(20 * time.Millisecond)

	// A NACK; the change is sent in answer.
	if err := stream.Send(&discoveryv3.DiscoveryRequest{
		TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name}, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Message: "no"},
	}); err != nil {
		t.Fatal(err)
	}
	clas, _ := recvCLAs(t, stream.Recv)
	if got := claAddrs(clas[name]); !slices.Equal(got, []string{"10.0.0.2"}) {
		t.Fatalf("response after the NACK: %v", got)
	}
	promtest.Eventually(t, prom, 1, "meshreg_xds_nacks_total", cla...)
	promtest.Eventually(t, prom, 0, "meshreg_xds_pending", grpcClient...)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"meshreg_xds_responses_total", 2},
		{"meshreg_xds_resources_sent_total", 2},
		{"meshreg_xds_change_to_response_seconds", 1},
	} {
		if got := value(c.name, cla...); got != c.want {
			t.Errorf("after the change was sent: %s = %v, want %v", c.name, got, c.want)
		}
	}
	// The change waited for the NACK: its delay holds the 20ms slept.
	if sum := promtest.Sum(t, prom, "meshreg_xds_change_to_response_seconds", cla...); sum < 0.02 {
		t.Errorf("change to response took %vs, less than the 20ms the client held it", sum)
	}

	// The stream closes.
	cancel()
	promtest.Eventually(t, prom, 0, "meshreg_xds_streams", grpcClient...)
	promtest.Eventually(t, prom, 0, "meshreg_xds_nodes")
}
