package aggregate_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/sources"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var update = flag.Bool("update", false, "rewrite the want.json goldens of the aggregate scenarios")

// TestScenarios runs every testdata/scenarios/agg-* scenario through the
// aggregate, built exactly as the examples build it: one manifest cluster
// per cluster-<ID>.yaml (the first by name is the config cluster, whose
// ServiceEntries are read; WorkloadEntries are read from every cluster),
// with the scenario's
// mesh-networks.yaml as Options.MeshNetworks when it has one, run until
// synced. When the scenario has a remove.txt, the clusters it lists (one
// per line) are then removed, every registry of theirs, and the remaining
// registries settle. The dump must equal want.json. Run with -update to rewrite the
// goldens, then read every changed one: a golden is right only if it says
// what the scenario's comments say should happen.
func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/scenarios/agg-*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 12 {
		t.Fatalf("found %d aggregate scenarios, want at least 12", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := runScenario(t, dir)
			golden := filepath.Join(dir, "want.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("dump differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func runScenario(t *testing.T, dir string) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "cluster-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cluster-*.yaml in %s", dir)
	}
	var cfg sources.Config
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "cluster-"), ".yaml")
		cfg.Clusters = append(cfg.Clusters, sources.Cluster{ID: model.ClusterID(id), Manifests: f})
	}
	if data, err := os.ReadFile(filepath.Join(dir, "mesh-networks.yaml")); err == nil {
		if cfg.MeshNetworks, err = aggregate.ParseMeshNetworks(data); err != nil {
			t.Fatal(err)
		}
	}
	built, err := sources.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- built.Aggregate.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitSynced(t, built.Aggregate)
	if removals, err := os.ReadFile(filepath.Join(dir, "remove.txt")); err == nil {
		for _, id := range strings.Fields(string(removals)) {
			for _, p := range []model.Provider{model.Kubernetes, model.External} {
				_ = built.Aggregate.Remove(p, model.ClusterID(id))
			}
		}
		// A removal hands the deletes of the cluster's workloads to the
		// registries that selected them, which apply them on their own
		// goroutines.
		waitSettled(t, built.Aggregate)
	}
	var out bytes.Buffer
	if err := registry.WriteJSON(&out, built.Discovery); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func waitSynced(t *testing.T, r interface{ HasSynced() bool }) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !r.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("aggregate did not sync")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitSettled waits until every registry of the aggregate has applied
// what it was handed (aggregate.Settler).
func waitSettled(t *testing.T, agg *aggregate.Controller) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, r := range agg.Registries() {
		s, ok := r.(aggregate.Settler)
		for ok && !s.Settled() {
			if time.Now().After(deadline) {
				t.Fatalf("registry %s/%s did not settle", r.Provider(), r.Cluster())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
