package serviceentry

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/internal/golden"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var update = flag.Bool("update", false, "rewrite the want.json of the golden scenarios")

// scenarioOptions is a scenario's optional options.json.
type scenarioOptions struct {
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
}

// TestScenarios runs each testdata/scenarios/se-*/config.yaml through a
// StaticSource (Namespaces too; Pods through HandleWorkload), with the
// options of its options.json if it has one, and compares the dump of
// the controller with want.json. Run with -update to rewrite the goldens,
// and read the diff before committing it.
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
			golden.Check(t, filepath.Join(dir, "want.json"), runScenario(t, dir), *update)
		})
	}
}

func runScenario(t *testing.T, dir string) []byte {
	t.Helper()
	objs, err := manifest.LoadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var opts Options
	if raw, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
		var so scenarioOptions
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&so); err != nil {
			t.Fatalf("options.json: %v", err)
		}
		opts.NamespaceSelector = so.NamespaceSelector
	}
	kube, istio := manifest.Split(objs)
	src, err := NewStaticSource(istio...)
	if err != nil {
		t.Fatal(err)
	}
	var pods []*corev1.Pod
	for _, o := range kube {
		switch o := o.(type) {
		case *corev1.Pod:
			pods = append(pods, o)
		case *corev1.Namespace:
			if err := src.Upsert(o); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("scenario input %T: only Namespaces and Pods may sit beside Istio objects", o)
		}
	}
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		c := start(t, src, opts)
		for _, p := range pods {
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
