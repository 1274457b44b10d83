package wds_test

import (
	"context"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/wds"
)

// timeout bounds every wait of the tests.
const timeout = 10 * time.Second

// env is a registry, its address index and a WDS server over it,
// serving gRPC on a loopback port, all stopped by the test's cleanup.
type env struct {
	reg  *memory.Registry
	idx  *address.Index
	srv  *wds.Server
	conn *grpc.ClientConn
}

type envOptions struct {
	// register registers the ADS service; nil is srv.Register.
	register func(*grpc.Server, *wds.Server)
	// noRegistryRun leaves the registry unsynced: the test runs it.
	noRegistryRun bool
	// serverOpts are the WDS server's options.
	serverOpts wds.Options
}

func newEnv(t *testing.T, reg *memory.Registry, o envOptions) *env {
	t.Helper()
	idx, err := address.New(reg, address.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wds.New(idx, o.serverOpts)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	if o.register != nil {
		o.register(gs, srv)
	} else {
		srv.Register(gs)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	run := func(f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	if !o.noRegistryRun {
		run(reg.Run)
	}
	run(idx.Run)
	run(srv.Run)
	wg.Go(func() { _ = gs.Serve(lis) })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		gs.Stop()
		wg.Wait()
	})
	return &env{reg: reg, idx: idx, srv: srv, conn: conn}
}

// waitIndex waits until the index's snapshot satisfies ok.
func waitIndex(t *testing.T, idx *address.Index, ok func(*address.Snapshot) bool) *address.Snapshot {
	t.Helper()
	changed := make(chan struct{}, 1)
	unsubscribe := idx.Subscribe(func(address.Change) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer unsubscribe()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if s := idx.Snapshot(); ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the index did not reach the state awaited in %v (generation %d)", timeout, idx.Snapshot().Generation())
		}
	}
}

// ads is a delta ADS client of the Address type, as ztunnel is: it
// acknowledges each response it reads, and keeps the resources it holds.
type ads struct {
	t      *testing.T
	stream discoverygrpc.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	cancel context.CancelFunc
	resps  chan *discoverygrpc.DeltaDiscoveryResponse
	ended  chan error // the stream's end, once
	done   chan struct{}
	// held are the versions of the resources it holds, by name.
	held map[string]string
}

func connect(t *testing.T, conn *grpc.ClientConn, first *discoverygrpc.DeltaDiscoveryRequest) *ads {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &ads{t: t, stream: stream, cancel: cancel, resps: make(chan *discoverygrpc.DeltaDiscoveryResponse),
		ended: make(chan error, 1), done: make(chan struct{}), held: map[string]string{}}
	go func() {
		defer close(c.done)
		for {
			r, err := stream.Recv()
			if err != nil {
				c.ended <- err
				return
			}
			select {
			case c.resps <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	c.send(first)
	t.Cleanup(c.disconnect)
	return c
}

// wildcardRequest is ztunnel's first request without on-demand.
func wildcardRequest() *discoverygrpc.DeltaDiscoveryRequest {
	return &discoverygrpc.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL, Node: &corev3.Node{Id: "ztunnel~10.0.0.100~ztunnel-1.istio-system~istio-system.svc.cluster.local"}}
}

// onDemandRequest is ztunnel's first request with on-demand: subscribe
// to "*" and unsubscribe from it, which subscribes to nothing.
func onDemandRequest() *discoverygrpc.DeltaDiscoveryRequest {
	r := wildcardRequest()
	r.ResourceNamesSubscribe, r.ResourceNamesUnsubscribe = []string{"*"}, []string{"*"}
	return r
}

func (c *ads) send(r *discoverygrpc.DeltaDiscoveryRequest) {
	c.t.Helper()
	if err := c.stream.Send(r); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *ads) subscribe(names ...string) {
	c.t.Helper()
	c.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL, ResourceNamesSubscribe: names})
}

// next reads the next response, applies it to held and ACKs it.
func (c *ads) next() *discoverygrpc.DeltaDiscoveryResponse {
	c.t.Helper()
	select {
	case r := <-c.resps:
		if r.GetTypeUrl() == wds.TypeURL {
			for _, res := range r.Resources {
				c.held[res.Name] = res.Version
			}
			for _, n := range r.RemovedResources {
				delete(c.held, n)
			}
		}
		c.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: r.GetTypeUrl(), ResponseNonce: r.Nonce})
		return r
	case err := <-c.ended:
		c.t.Fatalf("stream ended: %v", err)
	case <-time.After(timeout):
		c.t.Fatalf("no response in %v", timeout)
	}
	return nil
}

// end waits for the stream to end and returns its error.
func (c *ads) end() error {
	c.t.Helper()
	select {
	case r := <-c.resps:
		c.t.Fatalf("response %v, want the stream to end", r)
	case err := <-c.ended:
		return err
	case <-time.After(timeout):
		c.t.Fatalf("the stream did not end in %v", timeout)
	}
	return nil
}

// disconnect ends the stream from the client's side.
func (c *ads) disconnect() {
	c.cancel()
	<-c.done
}

// names returns the names of a response's resources.
func names(r *discoverygrpc.DeltaDiscoveryResponse) []string {
	var out []string
	for _, res := range r.Resources {
		out = append(out, res.Name)
	}
	return out
}

// decode returns a response's resources by name, checking that each is
// an Address under its key.
func decode(t *testing.T, r *discoverygrpc.DeltaDiscoveryResponse) map[string]*workloadapi.Address {
	t.Helper()
	out := map[string]*workloadapi.Address{}
	for _, res := range r.Resources {
		if got := res.GetResource().GetTypeUrl(); got != wds.TypeURL {
			t.Fatalf("resource %s has type %q", res.Name, got)
		}
		a := &workloadapi.Address{}
		if err := proto.Unmarshal(res.GetResource().GetValue(), a); err != nil {
			t.Fatalf("resource %s: %v", res.Name, err)
		}
		key := a.GetWorkload().GetUid()
		if s := a.GetService(); s != nil {
			key = s.Namespace + "/" + s.Hostname
		}
		if key != res.Name {
			t.Fatalf("resource named %s holds %s", res.Name, key)
		}
		out[res.Name] = a
	}
	return out
}

// expect checks a response's resources and removals, exactly.
func expect(t *testing.T, r *discoverygrpc.DeltaDiscoveryResponse, resources, removed []string) {
	t.Helper()
	if got := names(r); !slices.Equal(got, resources) {
		t.Errorf("resources %q, want %q", got, resources)
	}
	if !slices.Equal(r.RemovedResources, removed) {
		t.Errorf("removed %q, want %q", r.RemovedResources, removed)
	}
}

func keysOf[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
