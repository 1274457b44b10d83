package sources

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshreg/meshreg/registry"
)

const pod = `apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec: {nodeName: n1, containers: [{name: c, image: i}]}
status: {phase: Running, podIP: 10.1.0.1, podIPs: [{ip: 10.1.0.1}], conditions: [{type: Ready, status: "True"}]}
`

const slice = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 80}]
endpoints: [{addresses: [10.1.0.1], conditions: {ready: true}, targetRef: {kind: Pod, name: web-1, namespace: default}}]
`

// With shared informers the kube controllers read the same objects from
// a SharedInformerFactory the cluster's owner runs: the dump is the one
// the controllers' own informers give, and SharedCacheChanges tells an
// object of the shared cache that was modified from one that was not.
func TestSharedInformers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(web+"---\n"+pod+"---\n"+slice+"---\n"+entry), 0o600); err != nil {
		t.Fatal(err)
	}
	dump := func(shared bool) ([]byte, *ManifestCluster) {
		b, err := Build(Config{Clusters: []Cluster{{ID: "a", Manifests: file}}, SharedInformers: shared})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(run(t, b))
		if shared != (b.Manifests["a"].factory != nil) {
			t.Fatalf("SharedInformers %v, the cluster has a factory: %v", shared, !shared)
		}
		var buf bytes.Buffer
		if err := registry.WriteJSON(&buf, b.Discovery); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), b.Manifests["a"]
	}
	own, _ := dump(false)
	shared, mc := dump(true)
	if !bytes.Equal(own, shared) {
		t.Errorf("shared informers give another dump:\n%s\nthe controllers' own:\n%s", shared, own)
	}
	if !bytes.Contains(shared, []byte("10.1.0.1")) {
		t.Fatalf("the dump has no endpoint of web:\n%s", shared)
	}
	if got := mc.SharedCacheChanges(); len(got) != 0 {
		t.Fatalf("shared caches changed by reading them: %v", got)
	}
	// A modified object of the shared cache is told.
	cached, ok, err := mc.factory.Core().V1().Pods().Informer().GetStore().GetByKey("default/web-1")
	if err != nil || !ok {
		t.Fatalf("the shared cache has no pod web-1: %v", err)
	}
	cached.(*corev1.Pod).Labels["app"] = "changed"
	if got := mc.SharedCacheChanges(); len(got) != 1 || got[0] != "Pod/default/web-1" {
		t.Errorf("SharedCacheChanges after a pod's label changed in the cache = %v, want [Pod/default/web-1]", got)
	}
}
