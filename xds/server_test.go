package xds_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/xds"
)

// scenario runs a memory registry, its view and the xDS server on
// loopback.
type scenario struct {
	reg   *memory.Registry
	nodes *xds.Server
	ads   discoveryv3.AggregatedDiscoveryServiceClient
}

func startScenario(t *testing.T, setup func(*memory.Registry)) *scenario {
	t.Helper()
	return startScenarioWith(t, setup, xds.Options{})
}

func startScenarioWith(t *testing.T, setup func(*memory.Registry), opts xds.Options) *scenario {
	t.Helper()
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &scenario{reg: reg}
	if setup != nil {
		setup(s.reg)
	}
	view, err := proxyview.New(s.reg, proxyview.Options{SkipGatewayHostnames: true})
	if err != nil {
		t.Fatal(err)
	}
	opts.Debounce = proxyview.DebounceOptions{Quiet: 10 * time.Millisecond}
	s.nodes, err = xds.New(view, opts)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	s.nodes.Register(gs)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				t.Errorf("%v", err)
			}
		}()
	}
	run(func() error { return s.nodes.Run(ctx) })
	run(func() error { return view.Run(ctx) })
	run(func() error { return s.reg.Run(ctx) })
	run(func() error { return gs.Serve(lis) })
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		cancel()
		gs.GracefulStop()
		wg.Wait()
	})
	eventually(t, "the view to sync", view.HasSynced)
	s.ads = discoveryv3.NewAggregatedDiscoveryServiceClient(cc)
	return s
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// node returns an xDS node with string metadata.
func node(id string, md map[string]any) *corev3.Node {
	s, err := structpb.NewStruct(md)
	if err != nil {
		panic(err)
	}
	return &corev3.Node{Id: id, Metadata: s}
}

func claAddrs(cla *endpointv3.ClusterLoadAssignment) []string {
	var out []string
	for _, loc := range cla.GetEndpoints() {
		for _, lb := range loc.GetLbEndpoints() {
			out = append(out, lb.GetEndpoint().GetAddress().GetSocketAddress().GetAddress())
		}
	}
	return out
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

func TestServeStateOfTheWorld(t *testing.T) {
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	s := startScenario(t, func(r *memory.Registry) {
		r.AddService(echo)
		r.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	})
	name := xds.ClusterName(echo.Hostname, 8080)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := s.ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatalf("ADS stream: %v", err)
	}
	req := &discoveryv3.DiscoveryRequest{
		Node:    node("sotw", map[string]any{xds.MetadataNamespace: "default"}),
		TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name},
	}
	if err := stream.Send(req); err != nil {
		t.Fatalf("send: %v", err)
	}
	// The node is built on its first request: the first response holds
	// its resources.
	clas, resp := recvCLAs(t, stream.Recv)
	if got := claAddrs(clas[name]); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Fatalf("first response: %s = %v", name, got)
	}

	// ACK, then change the endpoints: a new response follows.
	req.Node = nil // only the first request carries the node
	req.VersionInfo, req.ResponseNonce = resp.GetVersionInfo(), resp.GetNonce()
	if err := stream.Send(req); err != nil {
		t.Fatalf("ack: %v", err)
	}
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	clas, next := recvCLAs(t, stream.Recv)
	if got := claAddrs(clas[name]); !slices.Equal(got, []string{"10.0.0.2"}) {
		t.Fatalf("response after the change: %s = %v", name, got)
	}
	if next.GetVersionInfo() == resp.GetVersionInfo() {
		t.Errorf("the changed load assignment kept version %q", resp.GetVersionInfo())
	}
	st, ok := s.nodes.Node("sotw")
	if !ok || st.Streams != 1 || st.Proxy.Namespace != "default" {
		t.Errorf("Node(sotw) = %+v, %v; want one stream, namespace default", st, ok)
	}
	// The stream was sent the change; its client acknowledged the
	// response before it.
	streams := s.nodes.Streams()
	if len(streams) != 1 || streams[0].Node != "sotw" || streams[0].Delta || len(streams[0].Types) != 1 {
		t.Fatalf("Streams() = %+v, want the one state-of-the-world stream, of one type", streams)
	}
	eds := streams[0].Types[0]
	if eds.TypeURL != resourcev3.EndpointType || eds.Wildcard || eds.Subscribed != 1 ||
		eds.Sent.Version != next.GetVersionInfo() || eds.Sent.Nonce != next.GetNonce() || eds.Sent.Resources != 1 ||
		eds.Acked.Version != resp.GetVersionInfo() || eds.NACK != "" || !eds.Owed.IsZero() {
		t.Errorf("the stream's load assignments: %+v; want sent %s (nonce %s), acknowledged %s, one name, nothing owed",
			eds, next.GetVersionInfo(), next.GetNonce(), resp.GetVersionInfo())
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
}

func TestServeDelta(t *testing.T) {
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	other := memory.Service("other", "default").Port("grpc", 8080).Build()
	s := startScenario(t, func(r *memory.Registry) {
		r.AddService(echo, other)
		r.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
		r.SetEndpoints(other.Key(), memory.Endpoint("10.0.1.1", 9000).Port("grpc").Build())
	})
	echoName, otherName := xds.ClusterName(echo.Hostname, 8080), xds.ClusterName(other.Hostname, 8080)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := s.ads.DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatalf("delta ADS stream: %v", err)
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{
		Node: node("delta", nil), TypeUrl: resourcev3.EndpointType,
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
	if got := names(); !slices.Equal(got, []string{echoName, otherName}) {
		t.Fatalf("first delta response: %v", got)
	}
	// A change to echo's endpoints sends echo's assignment alone.
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	if got := names(); !slices.Equal(got, []string{echoName}) {
		t.Fatalf("delta response after echo changed: %v, want %s alone", got, echoName)
	}
	// Deleting other removes its assignment.
	s.reg.DeleteService(other.Key())
	if got := names(); !slices.Equal(got, []string{otherName}) {
		t.Fatalf("delta response after other was deleted: %v, want %s removed", got, otherName)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
}

// A node whose metadata does not parse is refused: its stream ends with
// the reason, naming the node and the bad value.
func TestServeRefusesInvalidNode(t *testing.T) {
	s := startScenario(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, delta := range []bool{false, true} {
		n := node("bad-ips", map[string]any{xds.MetadataInstanceIPs: "10.0.0.1,not-an-ip"})
		var err error
		if delta {
			var stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
			if stream, err = s.ads.DeltaAggregatedResources(ctx); err == nil {
				if err = stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: n, TypeUrl: resourcev3.ListenerType}); err == nil {
					_, err = stream.Recv()
				}
			}
		} else {
			var stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
			if stream, err = s.ads.StreamAggregatedResources(ctx); err == nil {
				if err = stream.Send(&discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resourcev3.ListenerType}); err == nil {
					_, err = stream.Recv()
				}
			}
		}
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `"bad-ips"`) || !strings.Contains(err.Error(), `"not-an-ip"`) {
			t.Errorf("delta=%v: stream ended with %v; want InvalidArgument naming the node and the bad IP", delta, err)
		}
	}
	if ids := s.nodes.IDs(); len(ids) != 0 {
		t.Errorf("refused nodes are registered: %v", ids)
	}
}

// A node's streams are counted; its snapshot goes with the last one.
func TestServeCountsStreamsPerNode(t *testing.T) {
	s := startScenario(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	open := func() context.CancelFunc {
		t.Helper()
		sctx, stop := context.WithCancel(ctx)
		stream, err := s.ads.StreamAggregatedResources(sctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node("twice", nil), TypeUrl: resourcev3.ListenerType}); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil { // every type has a version, so an empty answer comes
			t.Fatal(err)
		}
		return stop
	}
	streams := func() int {
		st, _ := s.nodes.Node("twice")
		return st.Streams
	}
	stop1 := open()
	stop2 := open()
	if got := streams(); got != 2 {
		t.Fatalf("streams = %d, want 2", got)
	}
	stop1()
	eventually(t, "one stream left", func() bool { return streams() == 1 })
	stop2()
	eventually(t, "the node to go", func() bool { return len(s.nodes.IDs()) == 0 })
}
