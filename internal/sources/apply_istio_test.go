package sources

import (
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/registry"
)

// TestApplyIstioObjectAgain is the regression test of a panic found by the
// reliability tier's convergence test: applying a ServiceEntry that was
// already applied compared the two with equality.Semantic.DeepEqual, which
// panics on the unexported fields of the protobuf messages in an Istio
// object's spec. Applying the same manifests twice, or a changed entry
// (registry-dump --watch after an edit), panicked.
func TestApplyIstioObjectAgain(t *testing.T) {
	we := "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: vm, namespace: default}\nspec: {address: 10.0.0.9, labels: {app: db}}\n"
	load := func(y string) []runtime.Object {
		t.Helper()
		objs, err := manifest.Load(strings.NewReader(y))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	b, err := Build(Config{Clusters: []Cluster{{ID: "a", Manifests: "m.yaml", FS: fstest.MapFS{"m.yaml": {Data: []byte(entry + "---\n" + we)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, b)()
	mc := b.Manifests["a"]
	// The same objects again: nothing changes.
	if err := mc.Apply(load(entry + "---\n" + we)); err != nil {
		t.Fatal(err)
	}
	// A changed entry and workload: both are updated.
	changed := strings.ReplaceAll(entry, "192.168.0.1", "192.168.0.2") + "---\n" + strings.ReplaceAll(we, "10.0.0.9", "10.0.0.8")
	if err := mc.Apply(load(changed)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the changed entry's endpoint", func() bool {
		for _, svc := range b.Discovery.Services() {
			for _, ep := range b.Discovery.Endpoints(svc.Key(), registry.EndpointQuery{}) {
				if ep.Addresses[0].String() == "192.168.0.2" {
					return true
				}
			}
		}
		return false
	})
	waitFor(t, "the changed workload entry", func() bool {
		for _, w := range b.Discovery.Workloads() {
			if w.Name == "vm" && w.Endpoint.Addresses[0].String() == "10.0.0.8" {
				return true
			}
		}
		return false
	})
}
