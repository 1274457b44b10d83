package xds_test

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshreg/meshreg/examples/xds-server/internal/xds"
	"github.com/meshreg/meshreg/registry/memory"
)

// startServer serves s's caches on loopback and returns an ADS client.
func startServer(t *testing.T, s *updaterScenario) discoveryv3.AggregatedDiscoveryServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := xds.Serve(ctx, lis, s.caches, xds.ServerOptions{ShutdownGrace: time.Second}); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close(); cancel(); wg.Wait() })
	return discoveryv3.NewAggregatedDiscoveryServiceClient(cc)
}

func TestServeStateOfTheWorld(t *testing.T) {
	s := startUpdater(t)
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	s.reg.AddService(echo)
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	name := xds.ClusterName(echo.Hostname, 8080)
	eventually(t, "echo's load assignment", func() bool { return s.cla(t, name) != nil })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := startServer(t, s).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatalf("ADS stream: %v", err)
	}
	req := &discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: "sotw"}, TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name}}
	if err := stream.Send(req); err != nil {
		t.Fatalf("send: %v", err)
	}
	clas, resp := recvCLAs(t, stream.Recv)
	if got := claAddrs(clas[name]); !equalStrings(got, "10.0.0.1") {
		t.Fatalf("first response: %s = %v", name, got)
	}

	// ACK, then change the endpoints: a new response follows.
	req.VersionInfo, req.ResponseNonce = resp.GetVersionInfo(), resp.GetNonce()
	if err := stream.Send(req); err != nil {
		t.Fatalf("ack: %v", err)
	}
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	clas, _ = recvCLAs(t, stream.Recv)
	if got := claAddrs(clas[name]); !equalStrings(got, "10.0.0.2") {
		t.Fatalf("response after the change: %s = %v", name, got)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
}

// recvCLAs receives a response of load assignments and returns them by
// name, with the response.
func recvCLAs(t *testing.T, recv func() (*discoveryv3.DiscoveryResponse, error)) (map[string]*endpointv3.ClusterLoadAssignment, *discoveryv3.DiscoveryResponse) {
	t.Helper()
	resp, err := recv()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	out := map[string]*endpointv3.ClusterLoadAssignment{}
	for _, a := range resp.GetResources() {
		var cla endpointv3.ClusterLoadAssignment
		if err := a.UnmarshalTo(&cla); err != nil {
			t.Fatalf("resource is not a ClusterLoadAssignment: %v", err)
		}
		out[cla.GetClusterName()] = &cla
	}
	return out, resp
}

func TestServeDelta(t *testing.T) {
	s := startUpdater(t)
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	other := memory.Service("other", "default").Port("grpc", 8080).Build()
	s.reg.AddService(echo, other)
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	s.reg.SetEndpoints(other.Key(), memory.Endpoint("10.0.1.1", 9000).Port("grpc").Build())
	echoName, otherName := xds.ClusterName(echo.Hostname, 8080), xds.ClusterName(other.Hostname, 8080)
	eventually(t, "both load assignments", func() bool { return s.cla(t, echoName) != nil && s.cla(t, otherName) != nil })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := startServer(t, s).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatalf("delta ADS stream: %v", err)
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{
		Node: &corev3.Node{Id: "delta"}, TypeUrl: resourcev3.EndpointType,
		ResourceNamesSubscribe: []string{echoName, otherName},
	}); err != nil {
		t.Fatalf("send: %v", err)
	}
	names := func() []string {
		t.Helper()
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resourcev3.EndpointType, ResponseNonce: resp.GetNonce()}); err != nil {
			t.Fatalf("ack: %v", err)
		}
		var out []string
		for _, r := range resp.GetResources() {
			out = append(out, r.GetName())
		}
		slices.Sort(out)
		return append(out, resp.GetRemovedResources()...)
	}
	if got := names(); !equalStrings(got, echoName, otherName) {
		t.Fatalf("first delta response: %v", got)
	}
	// A change to echo's endpoints sends echo's assignment alone.
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	if got := names(); !equalStrings(got, echoName) {
		t.Fatalf("delta response after echo changed: %v, want %s alone", got, echoName)
	}
	// Deleting other removes its assignment.
	s.reg.DeleteService(other.Key())
	if got := names(); !equalStrings(got, otherName) {
		t.Fatalf("delta response after other was deleted: %v, want %s removed", got, otherName)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
}
