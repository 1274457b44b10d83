package sources

import (
	"strings"
	"testing"
	"testing/fstest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
)

// The namespace selector reaches the serviceentry controller too: the
// ServiceEntries of a namespace it does not select are ignored, and a
// relabel of the namespace (an Apply) brings them in.
func TestNamespaceSelectorAppliesToIstioConfig(t *testing.T) {
	ns := func(labels string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {" + labels + "}}\n---\n"
	}
	m := ns("team: x") + entry
	b, err := Build(Config{
		Clusters:          []Cluster{{ID: "a", Manifests: "m.yaml", FS: fstest.MapFS{"m.yaml": {Data: []byte(m)}}}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer run(t, b)()
	key := model.ServiceKey{Namespace: "default", Hostname: "db.example.com"}
	if b.Discovery.ServiceByKey(key) != nil {
		t.Fatal("the entry of an unselected namespace is used")
	}
	objs, err := manifest.Load(strings.NewReader(ns("mesh: \"on\"") + entry))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Manifests["a"].Apply(objs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the entry once its namespace is selected", func() bool { return b.Discovery.ServiceByKey(key) != nil })
}
