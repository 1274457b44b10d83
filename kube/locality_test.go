package kube

import (
	"testing"

	"github.com/meshreg/meshreg/model"
)

func TestLocality(t *testing.T) {
	node := map[string]string{labelRegion: "r", labelZone: "z", labelSubzone: "s", "other": "x"}
	tests := []struct {
		name      string
		podLabels map[string]string
		node      map[string]string
		want      string
	}{
		{"from node", nil, node, "r/z/s"},
		{"node without subzone", nil, map[string]string{labelRegion: "r", labelZone: "z"}, "r/z"},
		{"only a zone", nil, map[string]string{labelZone: "z"}, "/z"},
		{"no node", nil, nil, ""},
		{"pod label overrides, dot separated", map[string]string{labelLocality: "r2.z2"}, node, "r2/z2"},
		{"pod label with slashes", map[string]string{labelLocality: "r2/z2/s2"}, node, "r2/z2/s2"},
		{"empty pod label ignored", map[string]string{labelLocality: ""}, node, "r/z/s"},
	}
	for _, tt := range tests {
		if got := podLocality(tt.podLabels, nodeLocality(tt.node)).String(); got != tt.want {
			t.Errorf("%s: locality = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// FuzzLocality checks that any labels give a locality without panicking
// and that a pod label, when set, decides it.
func FuzzLocality(f *testing.F) {
	f.Add("r.z.s", "r", "z", "s")
	f.Add("", "", "", "")
	f.Add("a/b.c/d/e", "x", "", "y")
	f.Fuzz(func(t *testing.T, podLabel, region, zone, subzone string) {
		node := nodeLocality(map[string]string{labelRegion: region, labelZone: zone, labelSubzone: subzone})
		if node != (model.Locality{Region: region, Zone: zone, Subzone: subzone}) {
			t.Fatalf("nodeLocality = %+v", node)
		}
		got := podLocality(map[string]string{labelLocality: podLabel}, node)
		if podLabel == "" && got != node {
			t.Errorf("empty pod label should keep node locality")
		}
		if podLabel != "" && got != model.ParseLocality(podLabel) {
			t.Errorf("pod label ignored: %+v", got)
		}
	})
}
