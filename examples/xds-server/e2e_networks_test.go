package main

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
)

// forwarder is a network's gateway on loopback: it accepts TCP
// connections, dials one backend for each, and copies both ways. A real
// east-west gateway picks the workload from the connection's SNI; this one
// knows a single workload.
type forwarder struct {
	port   uint32
	target string
	lis    net.Listener
	conns  atomic.Int64 // connections accepted

	mu     sync.Mutex
	closed bool
	open   []net.Conn
	wg     sync.WaitGroup
}

func startForwarder(t *testing.T, to *backend) *forwarder {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("forwarder: listen: %v", err)
	}
	f := &forwarder{
		port: uint32(lis.Addr().(*net.TCPAddr).Port), lis: lis,
		target: net.JoinHostPort("127.0.0.1", strconv.Itoa(int(to.port))),
	}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *forwarder) accept() {
	defer f.wg.Done()
	for {
		down, err := f.lis.Accept()
		if err != nil {
			return // closed
		}
		f.conns.Add(1)
		up, err := net.Dial("tcp", f.target)
		if err != nil {
			down.Close()
			continue
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			down.Close()
			up.Close()
			return
		}
		f.open = append(f.open, down, up)
		f.wg.Add(2)
		f.mu.Unlock()
		go f.pipe(up, down)
		go f.pipe(down, up)
	}
}

// pipe copies src to dst until either ends, then closes both, which ends
// the other direction too.
func (f *forwarder) pipe(dst, src net.Conn) {
	defer f.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (f *forwarder) close() {
	f.lis.Close()
	f.mu.Lock()
	f.closed = true
	for _, c := range f.open {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// TestEndToEndNetworks serves two grpc-go clients, in two namespaces on
// two networks, from one server: each gets its own view. A shared service
// has a backend on each network; network B has a gateway (a loopback
// forwarder), network A none. Then a burst of endpoint changes reaches
// both clients in one push.
func TestEndToEndNetworks(t *testing.T) {
	a, a2 := startBackend(t, "a"), startBackend(t, "a2")
	b, b2 := startBackend(t, "b"), startBackend(t, "b2")
	secretB := startBackend(t, "secret")
	gateway := startForwarder(t, b)

	mem, err := memory.New(memory.Options{ClusterID: "cluster-1"})
	if err != nil {
		t.Fatal(err)
	}
	shared := memory.Service("shared", "ns-shared").Port("grpc", 8080).ExportTo("ns-a", "ns-b").Build()
	secret := memory.Service("secret", "ns-b").Port("grpc", 8080).ExportTo(".").Build()
	mem.AddService(shared, secret)
	on := func(network model.NetworkID, locality string, be *backend) *model.Endpoint {
		return memory.Endpoint("127.0.0.1", be.port).Port("grpc").Network(network).Locality(locality).
			IstioTLS().Pod("ns-shared", be.name).Build()
	}
	onA := func(be *backend) *model.Endpoint { return on("net-a", "r1/z1", be) }
	onB := func(be *backend) *model.Endpoint { return on("net-b", "r2/z2", be) }
	mem.SetEndpoints(shared.Key(), onA(a), onB(b))
	mem.SetEndpoints(secret.Key(), onB(secretB))
	mem.SetNetworkGateways(model.NetworkGateway{Network: "net-b", Address: "127.0.0.1", Port: gateway.port})
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := agg.Add(mem); err != nil {
		t.Fatalf("aggregate add: %v", err)
	}

	// A quiet period long enough that scheduling delays cannot split the
	// burst below into two pushes.
	srv := startServer(t, agg, proxyview.DebounceOptions{Quiet: time.Second}, nil)
	defer srv.stop()
	client := func(id, ns, network, ip, locality string) clientNode {
		return clientNode{id: id, locality: locality, metadata: map[string]string{
			"NAMESPACE": ns, "NETWORK": network, "CLUSTER_ID": "cluster-1", "INSTANCE_IPS": ip,
		}}
	}
	resA := newResolver(t, srv.xdsAddr, client("client-a", "ns-a", "net-a", "10.10.0.1", "r1/z1"))
	resB := newResolver(t, srv.xdsAddr, client("client-b", "ns-b", "net-b", "10.20.0.1", "r2/z2"))
	ctx := context.Background()

	// Client A reaches a directly and b through network B's gateway.
	clA, _ := dial(t, resA, shared.Hostname, 8080)
	clA.until(ctx, "a and, through the gateway, b from network A", has("a", "b"))
	if n := gateway.conns.Load(); n == 0 {
		t.Errorf("client A reached b, but not through the gateway (no connection forwarded)")
	}
	if seen := clA.settled(ctx, 20); !has("a", "b")(seen) || len(seen) != 2 {
		t.Errorf("client A's calls reached %v; want a and b", seen)
	}
	pageA := waitPage(t, srv.debugURL, "client-a")
	wantEndpoints(t, "client A", pageA, shared.Hostname,
		endpointAt(a.port, ""), endpointAt(gateway.port, "net-b"))

	// Client B reaches b directly, and never a: network A has no
	// gateway, so proxyview leaves a out of B's view.
	clB, _ := dial(t, resB, shared.Hostname, 8080)
	clB.until(ctx, "b from network B", has("b"))
	if seen := clB.settled(ctx, 20); seen["b"] != 20 {
		t.Errorf("client B's calls reached %v; want b only", seen)
	}
	wantEndpoints(t, "client B", waitPage(t, srv.debugURL, "client-b"), shared.Hostname, endpointAt(b.port, ""))

	// The service exported to ns-b only: B calls it; A is answered a
	// listener response without its listener, so A's calls fail. grpc-go
	// takes a resource it has never received for missing only when its
	// resource timer (15s) fires, and a call waits for the channel's first
	// resolution until then: within the call's 2s it ends
	// DeadlineExceeded.
	secB, closeSecB := dial(t, resB, secret.Hostname, 8080)
	secB.until(ctx, "the secret service from ns-b", has("secret"))
	secA, closeSecA := dial(t, resA, secret.Hostname, 8080)
	_, err = secA.call(ctx)
	t.Logf("client A calling a service not exported to ns-a: %v", err)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("client A's call of the secret service = %v; want it to fail, waiting for a listener that never comes", err)
	}
	pageA = waitPage(t, srv.debugURL, "client-a")
	if services := pageA.Services; len(services) != 1 || services[0].Hostname != string(shared.Hostname) {
		t.Errorf("client A sees %+v; want the shared service alone", services)
	}
	if lds := xdsType(t, pageA, resourcev3.ListenerType); lds.Resources != 1 || lds.Responses < 2 {
		t.Errorf("client A's listeners: %+v; want one listener, sent on each of its two streams", lds)
	}
	closeSecA()
	closeSecB()
	for _, id := range []string{"client-a", "client-b"} {
		eventually(t, id+"'s second stream to close", func() bool { return waitPage(t, srv.debugURL, id).Streams == 1 })
	}

	// Before the burst, the initial state's push has come (and gave
	// neither node anything new: they were built from that state).
	eventually(t, "the first push", func() bool { return pushes(t, srv) >= 1 })
	pushesBefore := pushes(t, srv)
	eds := func(id string) debug.NodeType {
		return xdsType(t, waitPage(t, srv.debugURL, id), resourcev3.EndpointType)
	}
	edsBefore := map[string]debug.NodeType{"client-a": eds("client-a"), "client-b": eds("client-b")}
	for id, before := range edsBefore {
		if before.Versions != 1 {
			t.Errorf("%s: %d load assignment versions before the burst, want 1 (its first)", id, before.Versions)
		}
	}

	// A burst of endpoint changes, ending with a second backend on each
	// network. No state in between is the final one for client A.
	for _, eps := range [][]*model.Endpoint{
		{onA(a), onB(b), onA(a2)},
		{onA(a2), onB(b)},
		{onA(a), onA(a2), onB(b2)},
		{onA(a), onB(b), onB(b2)},
		{onA(a), onA(a2), onB(b), onB(b2)},
	} {
		mem.SetEndpoints(shared.Key(), eps...)
	}
	// A reaches a2 directly and b and b2 behind the gateway (which
	// forwards to b); B reaches b and b2 directly.
	clA.until(ctx, "a2 from network A", has("a", "a2", "b"))
	clB.until(ctx, "b2 from network B", has("b", "b2"))
	if seen := clA.settled(ctx, 30); seen["b2"] > 0 || seen["a"]+seen["a2"]+seen["b"] != 30 {
		t.Errorf("after the burst, client A's calls reached %v; want a, a2, and b through the gateway", seen)
	}
	if seen := clB.settled(ctx, 30); seen["b"]+seen["b2"] != 30 {
		t.Errorf("after the burst, client B's calls reached %v; want b and b2", seen)
	}
	wantEndpoints(t, "client A after the burst", waitPage(t, srv.debugURL, "client-a"), shared.Hostname,
		endpointAt(a.port, ""), endpointAt(a2.port, ""), endpointAt(gateway.port, "net-b"))

	// One push for the burst, and one new load assignment version, in
	// one response, for each node.
	eventually(t, "the burst's push to be counted", func() bool { return pushes(t, srv) >= pushesBefore+1 })
	if got := pushes(t, srv); got != pushesBefore+1 {
		t.Errorf("the burst made %v pushes, want 1", got-pushesBefore)
	}
	for id, before := range edsBefore {
		after := eds(id)
		if after.Versions != before.Versions+1 || after.Responses != before.Responses+1 {
			t.Errorf("%s: the burst gave %d load assignment versions in %d responses, want 1 in 1",
				id, after.Versions-before.Versions, after.Responses-before.Responses)
		}
	}
}

// xdsType returns what a node's page says of one xDS type.
func xdsType(t *testing.T, page debug.ProxyPage, typeURL string) debug.NodeType {
	t.Helper()
	for _, ts := range page.XDS {
		if ts.TypeURL == typeURL {
			return ts
		}
	}
	t.Fatalf("%s is served no %s", page.Node, typeURL)
	return debug.NodeType{}
}

// pushes returns the server's meshreg_xds_pushes_total.
func pushes(t *testing.T, s *server) float64 {
	t.Helper()
	return metricValue(t, httpGet(t, s.debugURL+"/metrics"), "meshreg_xds_pushes_total")
}

// waitPage returns /debug/proxy for a node, waiting for it to connect.
func waitPage(t *testing.T, debugURL, id string) debug.ProxyPage {
	t.Helper()
	var page debug.ProxyPage
	eventually(t, id+" to connect", func() bool {
		var ok bool
		page, ok = proxyPageOf(t, debugURL, id)
		return ok
	})
	return page
}

// endpoint is an endpoint on loopback as /debug/proxy shows it: its port,
// and its gateway's network when it is a gateway.
type endpoint struct {
	port    uint32
	gateway string
}

func endpointAt(port uint32, gatewayNetwork string) endpoint { return endpoint{port, gatewayNetwork} }

// wantEndpoints checks a node's endpoints of a service's one port, in
// any order.
func wantEndpoints(t *testing.T, who string, page debug.ProxyPage, host model.Hostname, want ...endpoint) {
	t.Helper()
	got := map[endpoint]bool{}
	for _, svc := range page.Services {
		if svc.Hostname != string(host) {
			continue
		}
		for _, ep := range svc.Ports[0].Endpoints {
			e := endpoint{port: ep.Port}
			if ep.Gateway != nil {
				e.gateway = ep.Gateway.Network
			}
			if ep.Address != "127.0.0.1" {
				t.Errorf("%s: endpoint at %s, not on loopback", who, ep.Address)
			}
			got[e] = true
		}
	}
	ok := len(got) == len(want)
	for _, w := range want {
		ok = ok && got[w]
	}
	if !ok {
		t.Errorf("%s: endpoints of %s = %v, want %v", who, host, got, want)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // not a synchronisation: a pause between polls
	}
}
