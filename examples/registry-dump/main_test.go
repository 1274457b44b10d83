package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDemoTable(t *testing.T) {
	code, out, errs := runCmd(t)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		// reviews runs in both clusters: one service, both VIPs, the
		// draining pod counted apart.
		"reviews.bookinfo.svc.cluster.local",
		"east=10.96.0.20 west=10.97.0.20",
		"3 Healthy, 1 Terminating",
		// the ServiceEntry selects a Pod and a WorkloadEntry.
		"payments.internal.example.com",
		"2 Healthy",
		// a DNS entry without addresses gets auto-allocated ones.
		"auto=240.240.",
		"7 services, 10 endpoints, 7 workloads",
		"Error    ServiceEntry payments/broken-entry [east]: invalid, not used",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestJSONIsTheDumpFormat(t *testing.T) {
	_, first, _ := runCmd(t, "-o", "json")
	code, second, errs := runCmd(t, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if first != second {
		t.Error("two dumps of the same demo differ")
	}
	var d registry.Dump
	dec := json.NewDecoder(strings.NewReader(first))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Version != registry.DumpVersion || len(d.Services) != 7 || len(d.Workloads) != 7 || len(d.NetworkGateways) != 2 || len(d.Diagnostics) != 1 {
		t.Errorf("dump: version %d, %d services, %d workloads, %d network gateways, %d diagnostics; want 1, 7, 7, 2, 1",
			d.Version, len(d.Services), len(d.Workloads), len(d.NetworkGateways), len(d.Diagnostics))
	}

	_, y, _ := runCmd(t, "-o", "yaml")
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML, fromJSON any
	_ = json.Unmarshal(j, &fromYAML)
	_ = json.Unmarshal([]byte(first), &fromJSON)
	a, _ := json.Marshal(fromYAML)
	b, _ := json.Marshal(fromJSON)
	if !bytes.Equal(a, b) {
		t.Error("-o yaml does not hold the same document as -o json")
	}
}

// -o addresses prints the demo's address index: every pod, WorkloadEntry
// and ServiceEntry endpoint of the config cluster (east, the first) as a
// workload, every Service and ServiceEntry host as a service; with
// -multi-network, every cluster's on the config cluster's network (the
// demo's clusters are on two).
func TestAddresses(t *testing.T) {
	for _, args := range [][]string{{"-o", "addresses"}, {"-o", "addresses", "-multi-network"}} {
		code, out, errs := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errs)
		}
		var doc struct {
			Workloads []struct {
				UID       string `json:"uid"`
				ClusterID string `json:"clusterId"`
				Network   string `json:"network"`
			} `json:"workloads"`
			Services []struct {
				Hostname string `json:"hostname"`
			} `json:"services"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var pods, entries int
		for _, w := range doc.Workloads {
			switch {
			case strings.Contains(w.UID, "//Pod/"):
				pods++
			case strings.Contains(w.UID, "/networking.istio.io/WorkloadEntry/"):
				entries++
			}
			if w.ClusterID != "" && w.ClusterID != "east" || w.Network != "" && w.Network != "network-east" {
				t.Errorf("%q: workload %s of cluster %s on network %s, want the config cluster's", args, w.UID, w.ClusterID, w.Network)
			}
		}
		if pods == 0 || entries == 0 || len(doc.Services) < 6 {
			t.Errorf("%q: %d pods, %d WorkloadEntries, %d services in\n%s", args, pods, entries, len(doc.Services), out)
		}
	}
}

func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"bad output", []string{"-o", "xml"}, `-o "xml": want table, json, yaml or addresses`},
		{"watch addresses", []string{"-o", "addresses", "-watch"}, "does not go with -o addresses"},
		{"cluster without name", []string{"-cluster", "path-only"}, "want NAME=PATH"},
		{"missing file", []string{"-f", filepath.Join(dir, "absent.yaml")}, "no such file"},
		{"same cluster twice", []string{"-cluster", "a=" + dir, "-cluster", "a=" + dir}, "cluster a given twice"},
		{"stray argument", []string{"stray.yaml"}, `unexpected argument "stray.yaml"`},
		{"bad selector", []string{"-namespace-selector", "a in (", "-f", dir}, "-namespace-selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q, want one line containing %q", errs, tc.want)
			}
		})
	}
}

const svcYAML = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.0.0.1
  ports: [{name: http, port: 80}]
`

func TestManifestFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(file, []byte(svcYAML+"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "-f", file, "-o", "json", "-domain-suffix", "example.internal")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var d registry.Dump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Services) != 1 || d.Services[0].Hostname != "web.default.svc.example.internal" {
		t.Errorf("services = %+v, want web.default.svc.example.internal", d.Services)
	}
	if got := d.Services[0].Addresses["Kubernetes"]; len(got) != 1 || got[0] != "10.0.0.1" {
		t.Errorf("VIPs = %v, want 10.0.0.1 under cluster Kubernetes", d.Services[0].Addresses)
	}
	// The unknown kind is a diagnostic, not a failure.
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Kind != "Widget" {
		t.Errorf("diagnostics = %+v, want one for the Widget", d.Diagnostics)
	}
}

// The MCS flags reach the registries: the table shows the ClusterSet host
// and counts the endpoints only their cluster may be sent.
func TestMCSFlagsAndTable(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	src := "../../testdata/scenarios/agg-mcs-clusterset/"
	for from, to := range map[string]string{src + "cluster-a.yaml": a, src + "cluster-b.yaml": b} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCmd(t, "-cluster", "a="+a, "-cluster", "b="+b, "-mcs-discovery", "-mcs-host")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"reviews.default.svc.clusterset.local",
		"a=242.255.0.10 b=242.255.0.11",
		"2 Healthy; 1 cluster-local",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := runCmd(t, "-cluster", "a="+a, "-mcs-host"); code != 2 || !strings.Contains(errs, "-mcs-host needs -mcs-discovery") {
		t.Errorf("-mcs-host alone: exit %d, stderr %q; want 2 and the flag it needs", code, errs)
	}
}

// syncBuffer is a bytes.Buffer safe for the watcher's goroutine and the
// test's.
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

func TestWatchFollowsFileChanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(file, []byte(svcYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var out, errs syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"-f", file, "-watch"}, &out, &errs) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d, stderr %q", code, errs.String())
		}
	}()
	waitFor(t, &out, "web.default.svc.cluster.local")
	if strings.Contains(out.String(), "add service") {
		t.Errorf("the initial state was printed as changes:\n%s", out.String())
	}
	api := strings.ReplaceAll(svcYAML, "web", "api")
	if err := os.WriteFile(file, []byte(svcYAML+"---\n"+api), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, "add service default/api.default.svc.cluster.local")
}

func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// -mesh-networks feeds the aggregate; the table lists the gateways.
func TestMeshNetworksFlagAndGatewayTable(t *testing.T) {
	dir := "../../testdata/scenarios/agg-network-gateways"
	code, out, errs := runCmd(t, "-mesh-networks", filepath.Join(dir, "mesh-networks.yaml"),
		"-cluster", "a="+filepath.Join(dir, "cluster-a.yaml"), "-cluster", "b="+filepath.Join(dir, "cluster-b.yaml"))
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"NETWORK GATEWAYS (5)",
		"net-a    -        192.0.2.1             15443  -      MeshNetworks",
		"net-b    b        b-gw.elb.example.com  15443  15008  Service",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	bad := filepath.Join(t.TempDir(), "mn.yaml")
	if err := os.WriteFile(bad, []byte("networks:\n  n:\n    gateways:\n    - address: 192.0.2.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCmd(t, "-mesh-networks", bad)
	if code != 2 || !strings.Contains(errs, "port 0 is not in 1-65535") {
		t.Errorf("invalid mesh networks: exit %d, stderr %q", code, errs)
	}
}

// -o addresses takes -trust-domain: every workload names it.
func TestAddressesTrustDomain(t *testing.T) {
	code, out, errs := runCmd(t, "-o", "addresses", "-trust-domain", "example.org")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var doc struct {
		Workloads []struct {
			UID         string `json:"uid"`
			TrustDomain string `json:"trustDomain"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Workloads) == 0 {
		t.Fatal("no workloads")
	}
	for _, w := range doc.Workloads {
		if w.TrustDomain != "example.org" {
			t.Errorf("workload %s: trust domain %q, want example.org", w.UID, w.TrustDomain)
		}
	}
}
