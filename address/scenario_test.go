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
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/meshconfig"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/sources"
)

var update = flag.Bool("update", false, "rewrite the want.json goldens of the address scenarios")

// TestScenarios runs every testdata/addresses scenario: the aggregate
// over one manifest cluster per cluster-<ID>.yaml (the first by name is
// the config cluster), the index over it (sources.Built.AddressIndex),
// which reads every cluster's networks, Namespaces and Gateways from the
// aggregate. The index, as WriteJSON writes it, must equal want.json.
// Then each step of the scenario's steps/ (in name order) brings the
// clusters its cluster-<ID>.yaml files name to those manifests through
// the running aggregate and index (objects created, updated, deleted),
// and the index must equal the step's want.json.
// hack/ambient-oracle/goldens.sh checks the goldens, steps included,
// against Istio's own index. Run with -update to rewrite them, then read
// every changed one.
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
			runScenario(t, dir, func(t *testing.T, wantDir string, got []byte) {
				golden.Check(t, filepath.Join(wantDir, "want.json"), got, *update)
			})
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

// runScenario builds and runs a scenario and calls check with the index
// of its first state, then of each step in a subtest of the step's name.
func runScenario(t *testing.T, dir string, check func(t *testing.T, wantDir string, got []byte)) {
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
	got := indexJSON(t, idx)
	check(t, dir, got)
	steps, err := filepath.Glob(filepath.Join(dir, "steps", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range steps {
		files, err := filepath.Glob(filepath.Join(step, "cluster-*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("step %s: no cluster-*.yaml", step)
		}
		for _, f := range files {
			id := model.ClusterID(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "cluster-"), ".yaml"))
			objs, err := manifest.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			mc := built.Manifests[id]
			if mc == nil {
				t.Fatalf("step %s: cluster %s is not one of the scenario's", step, id)
			}
			if err := mc.Apply(objs); err != nil {
				t.Fatal(err)
			}
		}
		got = settledIndex(t, built, idx, got)
		t.Run(filepath.Base(step), func(t *testing.T) { check(t, step, got) })
	}
}

func indexJSON(t *testing.T, idx *address.Index) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := address.WriteJSON(&out, idx.Snapshot()); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// settledIndex waits for the index to move from before (a step changes
// what the index holds, but for a step meant to change nothing, given up
// on after a while) and then to hold still, the aggregate and the index
// settled, and returns it. The changes travel from the fake API through
// the informers with no signal of their arrival, so stillness stands in
// for one, as in the reliability tier.
func settledIndex(t *testing.T, built *sources.Built, idx *address.Index, before []byte) []byte {
	t.Helper()
	settled := func() bool { return registry.Settler(built.Aggregate).Settled() && idx.Settled() }
	moved := time.After(5 * time.Second)
	for waiting := true; waiting; {
		select {
		case <-moved:
			waiting = false
		case <-time.After(10 * time.Millisecond):
			waiting = !settled() || bytes.Equal(indexJSON(t, idx), before)
		}
	}
	last, still := indexJSON(t, idx), time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for time.Since(still) < 300*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatal("the index did not settle")
		}
		time.Sleep(20 * time.Millisecond)
		cur := indexJSON(t, idx)
		if !settled() || !bytes.Equal(cur, last) {
			last, still = cur, time.Now()
		}
	}
	return last
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
