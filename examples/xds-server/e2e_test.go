package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	grpcxds "google.golang.org/grpc/xds" // registers the xds balancers; gives a resolver per bootstrap

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/xds"
)

// backendHeader is the response header in which a backend names itself.
const backendHeader = "x-backend"

// backend is a gRPC server on loopback that answers the health service
// and names itself in every response's headers.
type backend struct {
	name string
	port uint32
	srv  *grpc.Server
	done chan struct{}
}

func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("backend %s: listen: %v", name, err)
	}
	b := &backend{name: name, port: uint32(lis.Addr().(*net.TCPAddr).Port), done: make(chan struct{})}
	b.srv = grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := grpc.SetHeader(ctx, metadata.Pairs(backendHeader, name)); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(b.srv, health.NewServer())
	go func() {
		defer close(b.done)
		_ = b.srv.Serve(lis)
	}()
	t.Cleanup(func() { b.srv.Stop(); <-b.done })
	return b
}

// endpoint is the registry's endpoint for the backend.
func (b *backend) endpoint(mutate ...func(*memory.EndpointBuilder)) *model.Endpoint {
	eb := memory.Endpoint("127.0.0.1", b.port).Port("grpc").Pod("default", "echo-"+b.name).Locality("r1/z1")
	for _, m := range mutate {
		m(eb)
	}
	return eb.Build()
}

// caller is a gRPC client of the service through the xds resolver.
type caller struct {
	t      *testing.T
	health healthpb.HealthClient
}

// clientNode is the node a grpc-go client's bootstrap declares.
type clientNode struct {
	id       string
	metadata map[string]string
	locality string // region/zone
}

// newResolver returns an xds resolver whose bootstrap points at the xDS
// server at addr and declares node n. Each channel it builds has an xDS
// client, and an ADS stream, of its own.
func newResolver(t *testing.T, addr string, n clientNode) resolver.Builder {
	t.Helper()
	l := model.ParseLocality(n.locality)
	bootstrap, err := json.Marshal(map[string]any{
		"xds_servers": []any{map[string]any{
			"server_uri": addr, "channel_creds": []any{map[string]any{"type": "insecure"}},
			"server_features": []any{"xds_v3"},
		}},
		"node": map[string]any{
			"id": n.id, "metadata": n.metadata, "locality": map[string]any{"region": l.Region, "zone": l.Zone},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := grpcxds.NewXDSResolverWithConfigForTesting(bootstrap)
	if err != nil {
		t.Fatalf("xds resolver for %s: %v", n.id, err)
	}
	return r
}

// dial returns a caller of "xds:///<host>:<port>" through r; its channel
// closes with the test, or earlier by closeChannel.
func dial(t *testing.T, r resolver.Builder, host model.Hostname, port uint32) (c *caller, closeChannel func()) {
	t.Helper()
	target := "xds:///" + xds.ListenerName(host, port)
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(r))
	if err != nil {
		t.Fatalf("grpc client for %s: %v", target, err)
	}
	closeChannel = sync.OnceFunc(func() { cc.Close() })
	t.Cleanup(closeChannel)
	return &caller{t: t, health: healthpb.NewHealthClient(cc)}, closeChannel
}

// call makes one RPC and returns the backend that answered, or an error.
func (c *caller) call(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var md metadata.MD
	if _, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&md)); err != nil {
		return "", err
	}
	if v := md.Get(backendHeader); len(v) == 1 {
		return v[0], nil
	}
	return "", fmt.Errorf("response without %s header: %v", backendHeader, md)
}

// until calls repeatedly, collecting the backends that answered (cond may
// reset the collection), until cond holds; it fails the test at the
// deadline. Failed calls are retried: before the first resources arrive,
// the client's calls fail.
func (c *caller) until(ctx context.Context, what string, cond func(seen map[string]int) bool) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	seen := map[string]int{}
	var lastErr error
	for !cond(seen) {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s; backends reached: %v; last error: %v", what, seen, lastErr)
		}
		name, err := c.call(ctx)
		if err != nil {
			lastErr = err
			time.Sleep(10 * time.Millisecond) // not a synchronisation: a pause between failed attempts
			continue
		}
		seen[name]++
	}
}

// settled makes n calls and returns the backends that answered them.
func (c *caller) settled(ctx context.Context, n int) map[string]int {
	c.t.Helper()
	seen := map[string]int{}
	for range n {
		name, err := c.call(ctx)
		if err != nil {
			c.t.Fatalf("call after the update settled: %v", err)
		}
		seen[name]++
	}
	return seen
}

func has(names ...string) func(map[string]int) bool {
	return func(seen map[string]int) bool {
		for _, n := range names {
			if seen[n] == 0 {
				return false
			}
		}
		return true
	}
}

// TestEndToEnd serves a registry whose endpoints are real gRPC backends to
// a real grpc-go xDS client, and checks that the client's calls follow the
// registry: endpoints added, removed, and turned unhealthy.
func TestEndToEnd(t *testing.T) {
	a, b, c := startBackend(t, "a"), startBackend(t, "b"), startBackend(t, "c")

	prom := prometheus.NewRegistry() // the registries' metrics and the server's
	mem, err := memory.New(memory.Options{ClusterID: "cluster-1", Metrics: prom})
	if err != nil {
		t.Fatal(err)
	}
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	mem.AddService(echo)
	mem.SetEndpoints(echo.Key(), a.endpoint(), b.endpoint())
	agg, err := aggregate.New(aggregate.Options{Metrics: prom})
	if err != nil {
		t.Fatal(err)
	}
	if err := agg.Add(mem); err != nil {
		t.Fatalf("aggregate add: %v", err)
	}

	srv := startServer(t, agg, proxyview.DebounceOptions{}, prom)
	defer srv.stop()
	r := newResolver(t, srv.xdsAddr, clientNode{id: "e2e-client", locality: "r1/z1", metadata: map[string]string{
		"NAMESPACE": "default", "CLUSTER_ID": "cluster-1", "INSTANCE_IPS": "127.0.0.1",
	}})
	cl, _ := dial(t, r, echo.Hostname, 8080)
	ctx := context.Background()

	start := time.Now()
	cl.until(ctx, "both initial backends", has("a", "b"))
	t.Logf("initial backends reached after %s", time.Since(start).Round(time.Millisecond))

	// Remove a, add c.
	start = time.Now()
	mem.SetEndpoints(echo.Key(), b.endpoint(), c.endpoint())
	cl.until(ctx, "the added backend c", has("c"))
	t.Logf("c reached %s after the update", time.Since(start).Round(time.Millisecond))
	if seen := cl.settled(ctx, 20); seen["a"] > 0 || !has("b", "c")(seen) {
		t.Errorf("after removing a and adding c, calls reached %v; want b and c only", seen)
	}

	// b turns unhealthy: gRPC uses only HEALTHY (and UNKNOWN) endpoints.
	start = time.Now()
	mem.SetEndpoints(echo.Key(), b.endpoint(func(e *memory.EndpointBuilder) { e.Health(model.Unhealthy) }), c.endpoint())
	cl.until(ctx, "calls to stop reaching unhealthy b", func(seen map[string]int) bool {
		// Ten calls in a row on c alone, after the last one on b.
		if seen["b"] > 0 {
			clear(seen)
		}
		return seen["c"] >= 10
	})
	t.Logf("b left %s after turning unhealthy", time.Since(start).Round(time.Millisecond))
	if seen := cl.settled(ctx, 20); seen["c"] != 20 {
		t.Errorf("with b unhealthy, calls reached %v; want c only", seen)
	}

	// The debug server reports what was served.
	metrics := httpGet(t, srv.debugURL+"/metrics")
	for _, want := range []string{
		`meshreg_services{cluster="",registry="aggregate"} 1`,
		`meshreg_endpoints{cluster="",registry="aggregate"} 2`,
		`meshreg_endpoints{cluster="cluster-1",registry="Kubernetes"} 2`,
		`meshreg_xds_streams{client="grpc"} 1`,
		`meshreg_xds_streams{client="envoy"} 0`,
		`meshreg_xds_nodes 1`,
		`meshreg_xds_resources{type="type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if pushes := metricValue(t, metrics, "meshreg_xds_pushes_total"); pushes < 2 {
		t.Errorf("meshreg_xds_pushes_total = %v, want a push for each of the two updates at least", pushes)
	}
	if page, ok := proxyPageOf(t, srv.debugURL, "e2e-client"); !ok || page.Proxy.Namespace != "default" || len(page.Services) != 1 {
		t.Errorf("/debug/proxy?node=e2e-client = %+v, %v; want the client in default, seeing echo", page, ok)
	}

	// Shutdown while the client is still connected is graceful: the xDS
	// streams end and the servers stop before the grace period runs out.
	start = time.Now()
	if err := srv.stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	took := time.Since(start)
	t.Logf("shutdown with the client connected took %s", took.Round(time.Millisecond))
	if took >= shutdownGrace {
		t.Errorf("shutdown took %s: the servers were closed, not stopped gracefully", took)
	}
}

// server is serve running on loopback.
type server struct {
	xdsAddr, debugURL string
	// stop stops serve and returns its error; later calls return the
	// same.
	stop func() error
}

// startServer runs serve over reg and waits until it is ready.
func startServer(t *testing.T, reg Registry, debounce proxyview.DebounceOptions, prom *prometheus.Registry) *server {
	return startServerResolving(t, reg, debounce, prom, nil)
}

// startServerResolving is startServer with the gateways' host names
// resolved by resolver (nil: the system's).
func startServerResolving(t *testing.T, reg Registry, debounce proxyview.DebounceOptions, prom *prometheus.Registry, resolver proxyview.Resolver) *server {
	t.Helper()
	xdsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	debugLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, reg, xdsLis, debugLis, serveOptions{debounce: debounce, prom: prom, resolver: resolver})
	}()
	s := &server{
		xdsAddr: xdsLis.Addr().String(), debugURL: "http://" + debugLis.Addr().String(),
		stop: sync.OnceValue(func() error { cancel(); return <-served }),
	}
	waitReady(t, s.debugURL+"/readyz")
	return s
}

// metricValue returns the value of an unlabelled metric in a /metrics
// page; the test fails when it is absent.
func metricValue(t *testing.T, page, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// proxyPageOf returns /debug/proxy for a node; false when the node is
// not connected.
func proxyPageOf(t *testing.T, debugURL, id string) (debug.ProxyPage, bool) {
	t.Helper()
	resp, err := http.Get(debugURL + "/debug/proxy?node=" + id)
	if err != nil {
		t.Fatalf("GET /debug/proxy: %v", err)
	}
	defer resp.Body.Close()
	defer http.DefaultClient.CloseIdleConnections()
	var page debug.ProxyPage
	if resp.StatusCode == http.StatusNotFound {
		return page, false
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("GET /debug/proxy?node=%s: %s %v", id, resp.Status, err)
	}
	return page, true
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready: %v", url, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	http.DefaultClient.CloseIdleConnections()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	defer http.DefaultClient.CloseIdleConnections()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return string(b)
}
