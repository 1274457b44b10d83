package address_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/internal/golden"
	"github.com/meshreg/meshreg/internal/sources"
	"github.com/meshreg/meshreg/meshconfig"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var update = flag.Bool("update", false, "rewrite the want.json goldens of the address scenarios")

// TestScenarios runs every testdata/addresses scenario: the aggregate
// over one manifest cluster per cluster-<ID>.yaml (the first by name is
// the config cluster), the index over it (sources.Built.AddressIndex),
// which reads every cluster's networks, Namespaces and Gateways from the
// aggregate. The index, as WriteJSON
// writes it, must equal want.json; hack/ambient-oracle/goldens.sh checks
// the goldens against Istio's own index. Run with -update to rewrite
// them, then read every changed one.
func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/addresses/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 15 {
		t.Fatalf("found %d address scenarios, want at least 15", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			golden.Check(t, filepath.Join(dir, "want.json"), runScenario(t, dir), *update)
		})
	}
}

// scenarioOptions is a scenario's options.json: the mesh's trust domain,
// Options.MultiNetwork, and a mesh config file of the scenario's whose
// serviceScopeConfigs are Options.ServiceScopes.
type scenarioOptions struct {
	TrustDomain  string `json:"trustDomain"`
	MultiNetwork bool   `json:"multiNetwork"`
	MeshConfig   string `json:"meshConfig"`
}

func runScenario(t *testing.T, dir string) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "cluster-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cluster-*.yaml in %s", dir)
	}
	var so scenarioOptions
	if data, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&so); err != nil {
			t.Fatalf("options.json: %v", err)
		}
	}
	mc := &meshconfig.Config{}
	if so.MeshConfig != "" {
		data, err := os.ReadFile(filepath.Join(dir, so.MeshConfig))
		if err != nil {
			t.Fatal(err)
		}
		if mc, err = meshconfig.Parse(data); err != nil {
			t.Fatal(err)
		}
	}
	cfg := sources.Config{TrustDomain: so.TrustDomain, ServiceEntryVisibility: mc.ServiceEntryVisibility}
	for _, f := range files {
		id := model.ClusterID(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "cluster-"), ".yaml"))
		cfg.Clusters = append(cfg.Clusters, sources.Cluster{ID: id, Manifests: f})
	}
	built, err := sources.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := built.AddressIndex(address.Options{TrustDomain: so.TrustDomain, MultiNetwork: so.MultiNetwork, ServiceScopes: mc.ServiceScopes})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	go func() { done <- built.Aggregate.Run(ctx) }()
	go func() { done <- idx.Run(ctx) }()
	defer func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()
	waitFor(t, "the index to sync", idx.HasSynced)
	waitFor(t, "the aggregate to settle", func() bool { return registry.Settler(built.Aggregate).Settled() })
	waitFor(t, "the index to apply what the aggregate holds", func() bool { return idx.Settled() })
	var out bytes.Buffer
	if err := address.WriteJSON(&out, idx.Snapshot()); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
