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

// TestApplyObjectWithoutName is the regression test of a nameless object
// found by the reliability tier's bad-input catalogue: the fake API took a
// Service without metadata.name, and the registry published a service
// ".ns.svc.cluster.local". Apply now reports the object and skips it.
func TestApplyObjectWithoutName(t *testing.T) {
	m := "apiVersion: v1\nkind: Service\nmetadata: {namespace: default}\nspec: {clusterIP: 10.0.0.9, ports: [{name: http, port: 80}]}\n---\n" + web
	b, err := Build(Config{Clusters: []Cluster{{ID: "a", Manifests: "m.yaml", FS: fstest.MapFS{"m.yaml": {Data: []byte(m)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, b)()
	for _, s := range b.Discovery.Services() {
		if s.Name == "" {
			t.Errorf("service without a name published: %s", s.Hostname)
		}
	}
	found := 0
	for _, d := range b.Discovery.Diagnostics() {
		if d.Kind == "Service" && d.Message == msgNoName {
			found++
		}
	}
	if found != 1 {
		t.Errorf("%d diagnostics for the nameless service, want 1: %v", found, b.Discovery.Diagnostics())
	}
	// Applying again does not pile the diagnostic up.
	if err := b.Manifests["a"].Reload(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range b.Discovery.Diagnostics() {
		if d.Message == msgNoName {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d diagnostics after reload, want 1", n)
	}
}
