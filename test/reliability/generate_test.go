package reliability_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/test/reliability"
)

// With PodNamesPerCluster no pod's namespace and name is held by both
// clusters, and the worlds keep their objects: only the names differ.
func TestPodNamesPerCluster(t *testing.T) {
	shared := 0
	for seed := range uint64(50) {
		plain := reliability.Generator{}.Sequence(seed).Final()
		named := reliability.Generator{PodNamesPerCluster: true}.Sequence(seed).Final()
		for _, c := range reliability.Clusters {
			if len(plain.Objects[c]) != len(named.Objects[c]) {
				t.Errorf("seed %d cluster %s: %d objects, %d with PodNamesPerCluster", seed, c, len(plain.Objects[c]), len(named.Objects[c]))
			}
		}
		for key := range plain.Objects["a"] {
			if strings.HasPrefix(key, "Pod/") && plain.Objects["b"][key] != "" {
				shared++
			}
		}
		for key := range named.Objects["a"] {
			if strings.HasPrefix(key, "Pod/") && named.Objects["b"][key] != "" {
				t.Errorf("seed %d: both clusters hold %s", seed, key)
			}
		}
	}
	if shared == 0 {
		t.Error("no seed has a pod in both clusters without PodNamesPerCluster: the test tests nothing")
	}
}

// With MCS the worlds hold ServiceExports and ServiceImports, and without
// them are the worlds of the same seed without MCS; the modes are spread.
func TestGeneratorMCS(t *testing.T) {
	modes := map[string]int{}
	objects := 0
	for seed := range uint64(60) {
		plain := reliability.Generator{}.Sequence(seed)
		mcs := reliability.Generator{MCS: true}.Sequence(seed)
		modes[fmt.Sprint(mcs.MCS)]++
		if len(plain.Steps) != len(mcs.Steps) {
			t.Fatalf("seed %d: %d steps, %d with MCS", seed, len(plain.Steps), len(mcs.Steps))
		}
		for i := range plain.Steps {
			w := mcs.Steps[i].World.Clone()
			for _, c := range reliability.Clusters {
				for key := range w.Objects[c] {
					if strings.HasPrefix(key, "ServiceExport/") || strings.HasPrefix(key, "ServiceImport/") {
						objects++
						w.Delete(c, key)
					}
				}
				if got, want := w.YAML(c), plain.Steps[i].World.YAML(c); got != want {
					t.Errorf("seed %d step %d cluster %s: the world without MCS objects differs from the plain sequence's", seed, i, c)
				}
			}
		}
	}
	if len(modes) != 3 || objects == 0 {
		t.Errorf("modes %v, %d MCS objects: want all three modes and some objects", modes, objects)
	}
}
