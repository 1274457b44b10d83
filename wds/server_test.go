package wds_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/wds"
)

const authorizationType = "type.googleapis.com/istio.security.Authorization"

func plainRegistry(t *testing.T) *memory.Registry {
	t.Helper()
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg.AddWorkload(pod("app-1", "10.0.0.1", nil))
	return reg
}

// ztunnel's own sequence on the plain wiring (srv.Register) and through
// Mux: one delta stream, its node id, a wildcard request for Address
// and one for Authorization, in either order, each response
// acknowledged; it becomes ready once it has acknowledged a response of
// each type. It is sent every address and an empty Authorization
// response, and nothing more until something changes; the stream stays
// open. A state-of-the-world stream is refused.
func TestZtunnelSequence(t *testing.T) {
	authz := func() *discoverygrpc.DeltaDiscoveryRequest {
		r := wildcardRequest()
		r.TypeUrl = authorizationType
		return r
	}
	for _, tc := range []struct {
		name     string
		register func(*grpc.Server, *wds.Server)
		first    func() *discoverygrpc.DeltaDiscoveryRequest
		second   func() *discoverygrpc.DeltaDiscoveryRequest
	}{
		{"plain, Address first", nil, wildcardRequest, authz},
		{"plain, Authorization first", nil, authz, wildcardRequest},
		{"mux, Address first", func(g *grpc.Server, s *wds.Server) {
			discoverygrpc.RegisterAggregatedDiscoveryServiceServer(g, wds.Mux{WDS: s, Other: otherADS{}})
		}, wildcardRequest, authz},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := plainRegistry(t)
			e := newEnv(t, reg, envOptions{register: tc.register})
			c := connect(t, e.conn, tc.first())
			c.send(tc.second())
			got := map[string]*discoverygrpc.DeltaDiscoveryResponse{}
			for range 2 {
				r := c.next() // acknowledged, as ztunnel does
				if _, dup := got[r.GetTypeUrl()]; dup {
					t.Fatalf("a second response of type %s before one of each", r.GetTypeUrl())
				}
				got[r.GetTypeUrl()] = r
			}
			expect(t, got[wds.TypeURL], []string{app1}, nil)
			if a := got[authorizationType]; a == nil || len(a.Resources) != 0 || a.Nonce == "" {
				t.Errorf("Authorization response %v, want one with a nonce and no resources", a)
			}
			// Ready, and the stream stays: the next change arrives on it.
			reg.AddWorkload(pod("app-2", "10.0.0.2", nil))
			expect(t, c.next(), []string{app2}, nil)
		})
	}

	e := newEnv(t, plainRegistry(t), envOptions{})
	sotw, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(e.conn).StreamAggregatedResources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sotw.Recv(); grpcstatus.Code(err) != codes.Unimplemented {
		t.Errorf("state of the world: %v, want Unimplemented", err)
	}
}

// otherADS answers each stream's first request with one response that
// names the request's node, then waits for the client to leave.
type otherADS struct{}

func (otherADS) StreamAggregatedResources(st discoverygrpc.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	r, err := st.Recv()
	if err != nil {
		return err
	}
	if err := st.Send(&discoverygrpc.DiscoveryResponse{TypeUrl: r.TypeUrl, VersionInfo: "other " + r.GetNode().GetId()}); err != nil {
		return err
	}
	_, err = st.Recv()
	return err
}

func (otherADS) DeltaAggregatedResources(st discoverygrpc.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	r, err := st.Recv()
	if err != nil {
		return err
	}
	if err := st.Send(&discoverygrpc.DeltaDiscoveryResponse{TypeUrl: r.TypeUrl, SystemVersionInfo: "other " + r.GetNode().GetId()}); err != nil {
		return err
	}
	_, err = st.Recv()
	return err
}

// Mux hands Address streams to WDS and the rest, first request
// replayed, to the other server; WDS answers ztunnel's other types with
// nothing.
func TestMux(t *testing.T) {
	e := newEnv(t, plainRegistry(t), envOptions{register: func(g *grpc.Server, s *wds.Server) {
		discoverygrpc.RegisterAggregatedDiscoveryServiceServer(g, wds.Mux{WDS: s, Other: otherADS{}})
	}})

	eds := wildcardRequest()
	eds.TypeUrl = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	c := connect(t, e.conn, eds)
	if r := c.next(); r.TypeUrl != eds.TypeUrl || r.SystemVersionInfo != "other "+eds.Node.Id {
		t.Errorf("delta stream of another type: %v, want the other server's answer to the first request", r)
	}

	sotw, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(e.conn).StreamAggregatedResources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := sotw.Send(&discoverygrpc.DiscoveryRequest{TypeUrl: eds.TypeUrl, Node: eds.Node}); err != nil {
		t.Fatal(err)
	}
	if r, err := sotw.Recv(); err != nil || r.VersionInfo != "other "+eds.Node.Id {
		t.Errorf("state of the world: %v, %v; want the other server's answer", r, err)
	}
	if err := sotw.CloseSend(); err != nil {
		t.Fatal(err)
	}

	z := connect(t, e.conn, wildcardRequest())
	expect(t, z.next(), []string{app1}, nil)
	z.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: authorizationType})
	if r := z.next(); r.TypeUrl != authorizationType || len(r.Resources) != 0 || len(r.RemovedResources) != 0 {
		t.Errorf("authorization: %v, want an empty answer", r)
	}
	z.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: authorizationType, ResourceNamesSubscribe: []string{"ns1/policy"}})
	if r := z.next(); r.TypeUrl != authorizationType || len(r.Resources) != 0 || !slices.Equal(r.RemovedResources, []string{"ns1/policy"}) {
		t.Errorf("authorization on demand: %v, want ns1/policy removed", r)
	}
	// The stream still serves addresses.
	e.reg.DeleteWorkload(pod("app-1", "10.0.0.1", nil).Key())
	expect(t, z.next(), nil, []string{app1})
}

// An on-demand client follows the IP it asked for as it moves between
// workloads, and stops hearing of it once it unsubscribes.
func TestOnDemandFollowsIP(t *testing.T) {
	e := newEnv(t, plainRegistry(t), envOptions{})
	c := connect(t, e.conn, onDemandRequest())
	expect(t, c.next(), nil, nil)
	c.subscribe("/10.0.0.5")
	expect(t, c.next(), nil, []string{"/10.0.0.5"})

	e.reg.AddWorkload(pod("app-5", "10.0.0.5", nil))
	app5 := "cluster-1//Pod/ns1/app-5"
	r := c.next()
	expect(t, r, []string{app5}, nil)
	if !slices.Equal(r.Resources[0].Aliases, []string{"/10.0.0.5"}) {
		t.Errorf("aliases %q", r.Resources[0].Aliases)
	}

	// The IP moves from app-5 to app-6.
	e.reg.AddWorkload(pod("app-5", "10.0.0.55", nil))
	expect(t, c.next(), nil, []string{"/10.0.0.5", app5})
	e.reg.AddWorkload(pod("app-6", "10.0.0.5", nil))
	expect(t, c.next(), []string{"cluster-1//Pod/ns1/app-6"}, nil)

	// Unsubscribed, app-6 is forgotten: its deletion is not sent, and
	// the next response is that of a new subscription.
	c.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL, ResourceNamesUnsubscribe: []string{"/10.0.0.5"}, ResourceNamesSubscribe: []string{"/10.9.9.9"}})
	expect(t, c.next(), nil, []string{"/10.9.9.9"}) // the request was taken
	e.reg.DeleteWorkload(pod("app-6", "10.0.0.5", nil).Key())
	waitIndex(t, e.idx, func(s *address.Snapshot) bool { return s.Get("cluster-1//Pod/ns1/app-6") == nil })
	c.subscribe(app1)
	expect(t, c.next(), []string{app1}, nil)
}

// syncBuffer is a log destination safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A NACK is logged and not retried.
func TestNACK(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, plainRegistry(t), envOptions{serverOpts: wds.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	c := connect(t, e.conn, wildcardRequest())
	select {
	case r := <-c.resps:
		c.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL, ResponseNonce: r.Nonce, ErrorDetail: &status.Status{Code: 3, Message: "bad workload"}})
	case err := <-c.ended:
		t.Fatal(err)
	}
	// Requests are taken in order: once this one is answered, the NACK
	// was read; and the answer holds only the name asked for.
	c.subscribe("/10.9.9.9")
	expect(t, c.next(), nil, []string{"/10.9.9.9"})
	if got := logs.String(); !strings.Contains(got, "wds response rejected") || !strings.Contains(got, "bad workload") {
		t.Errorf("logs %q, want the NACK", got)
	}
}

// The first response waits for the index to sync.
func TestWaitsForSync(t *testing.T) {
	reg := plainRegistry(t)
	e := newEnv(t, reg, envOptions{noRegistryRun: true})
	waitIndex(t, e.idx, func(s *address.Snapshot) bool { return s.Generation() > 0 })
	if e.idx.HasSynced() {
		t.Fatal("the index synced before its registry ran")
	}
	c := connect(t, e.conn, wildcardRequest())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	r := c.next()
	expect(t, r, []string{app1}, nil)
	if !e.idx.HasSynced() {
		t.Error("a response before the index synced")
	}
}

// When Run returns, the streams end, and new ones too; Run runs once.
func TestRunEndsStreams(t *testing.T) {
	reg := plainRegistry(t)
	idx, err := address.New(reg, address.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wds.New(idx, wds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = reg.Run(ctx) })
	wg.Go(func() { _ = idx.Run(ctx) })
	ran := make(chan error, 1)
	wg.Go(func() { ran <- srv.Run(runCtx) })
	wg.Go(func() { _ = gs.Serve(lis) })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		conn.Close()
		cancel()
		gs.Stop()
		wg.Wait()
	}()

	c := connect(t, conn, wildcardRequest())
	expect(t, c.next(), []string{app1}, nil)
	stopRun()
	if err := <-ran; err != nil {
		t.Errorf("Run: %v", err)
	}
	if err := c.end(); grpcstatus.Code(err) != codes.Unavailable {
		t.Errorf("stream after Run returned: %v, want Unavailable", err)
	}
	if err := connect(t, conn, wildcardRequest()).end(); grpcstatus.Code(err) != codes.Unavailable {
		t.Errorf("stream opened after Run returned: %v, want Unavailable", err)
	}
	if err := srv.Run(ctx); !errors.Is(err, registry.ErrAlreadyRunning) {
		t.Errorf("second Run: %v, want ErrAlreadyRunning", err)
	}
}

// An on-demand client that names a service, by VIP or by key, gets it
// with the workloads that back it, as istiod sends them: each under its
// key, with its own addresses as aliases.
func TestOnDemandService(t *testing.T) {
	reg := scenario(t)
	e := newEnv(t, reg, envOptions{})
	const svc = "ns1/app.ns1.svc.cluster.local"
	want := []string{"cluster-1//Pod/ns1/app-1", "cluster-1//Pod/ns1/app-2", "cluster-1//Pod/ns1/app-3", svc}
	for _, name := range []string{"/10.96.0.1", svc} {
		c := connect(t, e.conn, onDemandRequest())
		expect(t, c.next(), nil, nil)
		c.subscribe(name)
		r := c.next()
		expect(t, r, want, nil)
		aliases := map[string][]string{}
		for _, res := range r.Resources {
			aliases[res.Name] = res.Aliases
		}
		if !slices.Equal(aliases[svc], []string{"/10.96.0.1"}) || !slices.Equal(aliases["cluster-1//Pod/ns1/app-2"], []string{"/10.0.0.2"}) {
			t.Errorf("asking for %s: aliases %q", name, aliases)
		}
		c.disconnect()
	}
}

func TestNewRefusesNoIndex(t *testing.T) {
	if srv, err := wds.New(nil, wds.Options{}); !errors.Is(err, wds.ErrInvalidOptions) || srv != nil {
		t.Errorf("New(nil) = %v, %v; want nil, ErrInvalidOptions", srv, err)
	}
}
