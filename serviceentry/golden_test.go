package serviceentry

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var update = flag.Bool("update", false, "rewrite the want.json of the golden scenarios")

// TestScenarios runs each testdata/scenarios/se-*/config.yaml through a
// StaticSource (Pods through HandleWorkload) and compares the dump of the
// controller with want.json. Run with -update to rewrite the goldens, and
// read the diff before committing it.
func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/scenarios/se-*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no scenarios")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := runScenario(t, filepath.Join(dir, "config.yaml"))
			wantFile := filepath.Join(dir, "want.json")
			if *update {
				if err := os.WriteFile(wantFile, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("dump differs from %s (-want +got):\n%s", wantFile, diff)
			}
		})
	}
}

func runScenario(t *testing.T, config string) []byte {
	t.Helper()
	objs, err := manifest.LoadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	kube, istio := manifest.Split(objs)
	src, err := NewStaticSource(istio...)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		c := start(t, src, Options{})
		for _, o := range kube {
			p, ok := o.(*corev1.Pod)
			if !ok {
				t.Fatalf("scenario input %T: only Pods may sit beside Istio objects", o)
			}
			if w := podInstance(p, "Kubernetes"); w != nil {
				c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: w})
			}
		}
		synctest.Wait()
		if !c.HasSynced() {
			t.Fatal("not synced")
		}
		if err := registry.WriteJSON(&out, c); err != nil {
			t.Fatal(err)
		}
	})
	return out.Bytes()
}
