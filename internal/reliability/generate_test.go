package reliability_test

import (
	"strings"
	"testing"

	"github.com/meshreg/meshreg/internal/reliability"
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
