package aggregate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/golden"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/sources"
)

var update = flag.Bool("update", false, "rewrite the want.json goldens of the aggregate scenarios")

// TestScenarios runs every testdata/scenarios/agg-* scenario through the
// aggregate, built exactly as the examples build it: one manifest cluster
// per cluster-<ID>.yaml (the first by name is the config cluster, whose
// ServiceEntries are read; WorkloadEntries are read from every cluster), with the scenario's
// mesh-networks.yaml as Options.MeshNetworks when it has one and its
// options.json's switches (scenarioOptions), run until synced. Then come
// the removals: the clusters a remove.txt lists (one per line) are
// removed, and the objects of a removed-<ID>.yaml, which cluster <ID>
// held from the start, are deleted from it. The dump must equal
// want.json. (The oracle, hack/oracle/goldens.sh, reads the clusters
// that remain, cluster-*.yaml alone: the state after the removals.) Run
// with -update to rewrite the goldens, then read every changed one: a
// golden is right only if it says what the scenario's comments say
// should happen.
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
			golden.Check(t, filepath.Join(dir, "want.json"), runScenario(t, dir, false), *update)
		})
		// The kube controllers on shared informers give the same.
		t.Run(filepath.Base(dir)+"-shared", func(t *testing.T) {
			golden.Check(t, filepath.Join(dir, "want.json"), runScenario(t, dir, true), false)
		})
	}
}

func runScenario(t *testing.T, dir string, shared bool) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "cluster-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cluster-*.yaml in %s", dir)
	}
	cfg := sources.Config{SharedInformers: shared}
	removed := map[model.ClusterID]string{} // cluster → its manifests without the removed objects
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "cluster-"), ".yaml")
		c := sources.Cluster{ID: model.ClusterID(id), Manifests: f}
		if extra, err := os.ReadFile(filepath.Join(dir, "removed-"+id+".yaml")); err == nil {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c.FS, c.Manifests = fstest.MapFS{"kept.yaml": {Data: data}, "removed.yaml": {Data: extra}}, "."
			removed[c.ID] = f
		}
		cfg.Clusters = append(cfg.Clusters, c)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "mesh-networks.yaml")); err == nil {
		if cfg.MeshNetworks, err = aggregate.ParseMeshNetworks(data); err != nil {
			t.Fatal(err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
		var so scenarioOptions
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&so); err != nil {
			t.Fatalf("options.json: %v", err)
		}
		cfg.MCS = sources.MCS{ServiceDiscovery: so.MCS.ServiceDiscovery, Host: so.MCS.Host, ClusterLocal: so.MCS.ClusterLocal}
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
	if len(removed) > 0 {
		before := dumpOf(t, built.Discovery)
		for id, f := range removed {
			objs, err := manifest.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := built.Manifests[id].Apply(objs); err != nil {
				t.Fatal(err)
			}
		}
		return settledDump(t, built.Discovery, before)
	}
	return dumpOf(t, built.Discovery)
}

// scenarioOptions is the optional options.json of an aggregate scenario.
type scenarioOptions struct {
	// MCS switches Multi-Cluster Services on in every cluster
	// (kube.MCSOptions).
	MCS struct {
		ServiceDiscovery bool `json:"serviceDiscovery"`
		Host             bool `json:"host"`
		ClusterLocal     bool `json:"clusterLocal"`
	} `json:"mcs"`
}

func dumpOf(t *testing.T, d registry.Discovery) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := registry.WriteJSON(&out, d); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// settledDump waits for the dump of d to move from before (the objects'
// deletion must change something: it is what the scenario shows) and
// then to hold still for a while, and returns it. The deletions travel
// from the fake API through informers and registries with no signal of
// their arrival, so stillness stands in for one.
func settledDump(t *testing.T, d registry.Discovery, before []byte) []byte {
	t.Helper()
	const still = 300 * time.Millisecond
	deadline := time.Now().Add(20 * time.Second)
	last, since := before, time.Now()
	for {
		cur := dumpOf(t, d)
		switch {
		case !bytes.Equal(cur, last):
			last, since = cur, time.Now()
		case !bytes.Equal(cur, before) && time.Since(since) >= still:
			return cur
		case time.Now().After(deadline):
			t.Fatal("the removals did not settle (or changed nothing)")
		}
		time.Sleep(10 * time.Millisecond)
	}
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
// what it was handed (registry.Settler).
func waitSettled(t *testing.T, agg *aggregate.Controller) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, r := range agg.Registries() {
		s, ok := r.(registry.Settler)
		for ok && !s.Settled() {
			if time.Now().After(deadline) {
				t.Fatalf("registry %s/%s did not settle", r.Provider(), r.Cluster())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
