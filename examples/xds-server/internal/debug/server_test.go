package debug_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

func fixture() *memory.Registry {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		panic(err)
	}
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	reg.AddService(echo)
	reg.SetEndpoints(echo.Key(),
		memory.Endpoint("10.0.0.1", 9000).Port("grpc").Pod("default", "echo-1").Build(),
		memory.Endpoint("10.0.0.2", 9000).Port("grpc").Pod("default", "echo-2").Build())
	reg.AddWorkload(memory.Workload("echo-1", "default").Address("10.0.0.1").Build())
	reg.AddDiagnostic(model.Diagnostic{Severity: model.Warning, Kind: "EndpointSlice", Namespace: "default", Name: "echo-abc",
		Message: "endpoint 10.0.0.3 pending: pod default/echo-3 is not known yet; withheld until it arrives"})
	return reg
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestDebugPages: the registry's pages are the library's, under
// /debug/registry/; the probes and 404s are the server's.
func TestDebugPages(t *testing.T) {
	reg := fixture()
	h := debug.NewHandler(reg, debughttp.Options{}, nil, nil, nil)

	code, body := get(t, h, "/debug/registry/services")
	var svcs debughttp.Page[debughttp.ServiceSummary]
	if err := json.Unmarshal([]byte(body), &svcs); code != 200 || err != nil {
		t.Fatalf("/debug/registry/services: %d %v\n%s", code, err, body)
	}
	if svcs.Total != 1 || svcs.Items[0].Hostname != "echo.default.svc.cluster.local" || svcs.Items[0].Endpoints != 2 {
		t.Errorf("/debug/registry/services = %+v", svcs)
	}

	code, body = get(t, h, "/debug/registry/endpoints?service=default/echo.default.svc.cluster.local")
	var eps debughttp.ServiceEndpoints
	if err := json.Unmarshal([]byte(body), &eps); code != 200 || err != nil {
		t.Fatalf("/debug/registry/endpoints: %d %v\n%s", code, err, body)
	}
	if eps.Total != 2 || len(eps.Clusters) != 1 || eps.Clusters[0].Endpoints[1].Workload != "default/echo-2" {
		t.Errorf("/debug/registry/endpoints = %+v", eps)
	}

	code, body = get(t, h, "/debug/registry/diagnostics")
	var ds debughttp.Page[registry.DumpDiagnostic]
	if err := json.Unmarshal([]byte(body), &ds); code != 200 || err != nil {
		t.Fatalf("/debug/registry/diagnostics: %d %v\n%s", code, err, body)
	}
	if ds.Total != 1 || ds.Items[0].Name != "echo-abc" || ds.Items[0].Severity != "Warning" {
		t.Errorf("/debug/registry/diagnostics = %+v", ds)
	}

	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, _ := get(t, h, "/nope"); code != 404 {
		t.Errorf("/nope = %d, want 404", code)
	}
}

func TestReadyzFollowsSync(t *testing.T) {
	reg := fixture()
	h := debug.NewHandler(reg, debughttp.Options{}, nil, nil, nil)
	if code, _ := get(t, h, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before sync = %d, want 503", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = reg.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := get(t, h, "/readyz")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d after the registry ran", code)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMetrics: /metrics serves the Prometheus registry it is given (the
// registry's own metrics, from memory.Options.Metrics, and the xDS
// server's), not the default one.
func TestMetrics(t *testing.T) {
	prom := prometheus.NewRegistry()
	reg, err := memory.New(memory.Options{Metrics: prom})
	if err != nil {
		t.Fatal(err)
	}
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	reg.AddService(echo)
	reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build(), memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build())
	reg.AddDiagnostic(model.Diagnostic{Severity: model.Warning, Kind: "EndpointSlice", Namespace: "default", Name: "echo-abc", Message: "odd"})
	_, body := get(t, debug.NewHandler(reg, debughttp.Options{}, nil, prom, nil), "/metrics")
	for _, want := range []string{
		`meshreg_services{cluster="cluster-1",registry="Kubernetes"} 1`,
		`meshreg_endpoints{cluster="cluster-1",registry="Kubernetes"} 2`,
		`meshreg_diagnostics{cluster="cluster-1",kind="EndpointSlice",registry="Kubernetes",severity="Warning"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics serves the default registry's Go collectors; want a registry of its own")
	}
}

func TestServeStopsOnContext(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := fixture()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var serveErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		serveErr = debug.Serve(ctx, lis, debug.NewHandler(reg, debughttp.Options{}, nil, nil, nil), time.Second, nil)
	}()
	resp, err := http.Get("http://" + lis.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "ok" {
		t.Errorf("GET /healthz = %d %q", resp.StatusCode, b)
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	wg.Wait()
	if serveErr != nil {
		t.Errorf("Serve: %v", serveErr)
	}
}
