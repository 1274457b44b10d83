package debughttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
)

// fixture is a registry of three services (one private to its namespace),
// endpoints in two clusters, a workload, a diagnostic and a gateway.
func fixture() *memory.Registry {
	reg, err := memory.New(memory.Options{ClusterID: "east"})
	if err != nil {
		panic(err)
	}
	for i, name := range []string{"a", "b", "c"} {
		sb := memory.Service(name, "shop").Port("http", 80).Port("grpc", 90).Cluster("east").VIP(fmt.Sprintf("10.96.0.%d", i+1))
		if name == "c" {
			sb.ExportTo(".")
		}
		svc := sb.Build()
		reg.AddService(svc)
		reg.SetEndpoints(svc.Key(),
			memory.Endpoint(fmt.Sprintf("10.0.%d.1", i), 8080).Port("http").Cluster("east").Build(),
			memory.Endpoint(fmt.Sprintf("10.1.%d.1", i), 8080).Port("http").Cluster("west").Build(),
			memory.Endpoint(fmt.Sprintf("10.0.%d.1", i), 9090).Port("grpc").Cluster("east").Build())
	}
	reg.AddWorkload(memory.Workload("w1", "shop").Address("10.0.0.1").Build())
	reg.AddDiagnostic(model.Diagnostic{Severity: model.Warning, Kind: "Service", Namespace: "shop", Name: "a", Message: "odd"})
	reg.SetNetworkGateways(model.NetworkGateway{Network: "net-west", Cluster: "west", Address: "192.0.2.1", Port: 15443})
	return reg
}

func get(t *testing.T, h http.Handler, url string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestPaths(t *testing.T) {
	h := debughttp.New(fixture(), debughttp.Options{PageSize: 2, MaxPageSize: 5})
	tests := []struct {
		url      string
		code     int
		contains []string
	}{
		{"/", 200, []string{`"/dump"`, `"/proxy"`}},
		{"/dump", 200, []string{`"version": 1`, `"a.shop.svc.cluster.local"`, `"networkGateways"`}},
		{"/services", 200, []string{`"total": 3`, `"next": 2`, `"a.shop.svc.cluster.local"`, `"endpoints": 3`}},
		{"/services?offset=2", 200, []string{`"c.shop.svc.cluster.local"`}},
		{"/services?namespace=nope", 200, []string{`"total": 0`, `"items": []`}},
		{"/services?limit=0", 400, []string{"limit 0: want 1 to 5"}},
		{"/services?limit=6", 400, []string{"limit 6: want 1 to 5"}},
		{"/services?offset=x", 400, []string{`offset "x": not a number`}},
		{"/endpoints?service=shop/a.shop.svc.cluster.local", 200, []string{`"total": 3`, `"cluster": "east"`, `"next": 2`}},
		{"/endpoints?service=shop/a.shop.svc.cluster.local&cluster=west", 200, []string{`"total": 1`, `"10.1.0.1"`}},
		{"/endpoints?service=shop/a.shop.svc.cluster.local&port=grpc", 200, []string{`"total": 1`, `"port": 9090`}},
		{"/endpoints?service=shop/a.shop.svc.cluster.local&port=nope", 400, []string{`port "nope": service shop/a.shop.svc.cluster.local has no port of that name`}},
		{"/endpoints?service=a.shop", 400, []string{`service "a.shop": want NAMESPACE/HOSTNAME`}},
		{"/endpoints?service=shop/nope", 404, []string{"service shop/nope: not in the registry"}},
		{"/workloads", 200, []string{`"total": 1`, `"w1"`}},
		{"/workloads?ip=10.0.0.1", 200, []string{`"total": 1`}},
		{"/workloads?ip=10.9.9.9", 200, []string{`"total": 0`}},
		{"/workloads?ip=nope", 400, []string{`ip "nope": not an IP address`}},
		{"/diagnostics?severity=warning", 200, []string{`"total": 1`, `"odd"`}},
		{"/diagnostics?severity=Error", 200, []string{`"total": 0`}},
		{"/diagnostics?severity=loud", 400, []string{`severity "loud": want Error or Warning`}},
		{"/gateways", 200, []string{`"192.0.2.1"`, `"total": 1`}},
		{"/proxy", 404, []string{"without Options.View"}},
		{"/streams", 404, []string{"no xDS or WDS server given"}},
		{"/nope", 404, nil},
	}
	for _, tt := range tests {
		code, body := get(t, h, tt.url)
		if code != tt.code {
			t.Errorf("GET %s = %d, want %d; body:\n%s", tt.url, code, tt.code, body)
			continue
		}
		for _, want := range tt.contains {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: body lacks %s:\n%s", tt.url, want, body)
			}
		}
	}
	// Only GET.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/dump", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /dump = %d, want 405", rec.Code)
	}
}

// TestPagesCoverTheList: walking the pages by their next offsets visits
// every service once.
func TestPagesCoverTheList(t *testing.T) {
	h := debughttp.New(fixture(), debughttp.Options{PageSize: 2})
	var seen []string
	for offset := 0; ; {
		code, body := get(t, h, fmt.Sprintf("/services?offset=%d", offset))
		if code != 200 {
			t.Fatalf("page at %d: %d %s", offset, code, body)
		}
		var p debughttp.Page[debughttp.ServiceSummary]
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Items {
			seen = append(seen, s.Hostname)
		}
		if p.Next == nil {
			break
		}
		offset = *p.Next
	}
	if strings.Join(seen, ",") != "a.shop.svc.cluster.local,b.shop.svc.cluster.local,c.shop.svc.cluster.local" {
		t.Errorf("pages visited %v", seen)
	}
}

func TestDumpBounded(t *testing.T) {
	h := debughttp.New(fixture(), debughttp.Options{MaxDumpEndpoints: 8})
	if code, body := get(t, h, "/dump"); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "holds 9 endpoints, more than the 8") {
		t.Errorf("GET /dump over the limit = %d %s", code, body)
	}
}

func TestProxy(t *testing.T) {
	reg := fixture()
	view, err := proxyview.New(reg, proxyview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = reg.Run(ctx); done <- struct{}{} }()
	go func() { _ = view.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for s := view.Snapshot(); !s.Synced() || s.Len() < 3; s = view.Snapshot() {
		if time.Now().After(deadline) {
			t.Fatal("the view did not sync")
		}
		select {
		case <-s.Superseded():
		case <-time.After(time.Second):
		}
	}
	h := debughttp.New(reg, debughttp.Options{View: view})
	tests := []struct {
		url      string
		code     int
		contains []string
		lacks    []string
	}{
		// From another namespace, c (exported to its own) is not seen.
		{"/proxy?namespace=web&cluster=east", 200, []string{`"total": 2`, `"10.96.0.1"`}, []string{"c.shop"}},
		{"/proxy?namespace=shop&cluster=east&ip=10.0.0.1", 200, []string{`"total": 3`, `"shop/a.shop.svc.cluster.local:80 -> 8080"`}, nil},
		{"/proxy?namespace=web&service=shop/a.shop.svc.cluster.local", 200, []string{`"name": "http"`, `"10.1.0.1"`, `"weight": 1`}, nil},
		{"/proxy?namespace=web&service=shop/c.shop.svc.cluster.local", 404, []string{"not what c.shop.svc.cluster.local names for this proxy"}, nil},
		{"/proxy?ip=10.0.0.1,bad", 400, []string{`ip "bad": not an IP address`}, nil},
		{"/proxy?dnsCapture=maybe", 400, []string{`dnsCapture "maybe": want true or false`}, nil},
	}
	for _, tt := range tests {
		code, body := get(t, h, tt.url)
		if code != tt.code {
			t.Errorf("GET %s = %d, want %d; body:\n%s", tt.url, code, tt.code, body)
			continue
		}
		for _, want := range tt.contains {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: body lacks %s:\n%s", tt.url, want, body)
			}
		}
		for _, not := range tt.lacks {
			if strings.Contains(body, not) {
				t.Errorf("GET %s: body has %s:\n%s", tt.url, not, body)
			}
		}
	}
}
