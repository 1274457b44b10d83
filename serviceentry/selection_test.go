package serviceentry

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

func selWorkload(ns, name string, labels map[string]string) (model.WorkloadKey, *model.WorkloadInstance) {
	k := model.WorkloadKey{Cluster: "c1", Kind: model.KindWorkloadEntry, Namespace: ns, Name: name}
	return k, &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: ns, Name: name,
		Endpoint: model.Endpoint{Labels: labels, Cluster: "c1"}}
}

func names(slots []*slot) []string {
	var out []string
	for _, sl := range slots {
		out = append(out, sl.key.Name)
	}
	return out
}

// TestSelection: an entry selects the workloads of its namespace that
// match every pair of its selector, whichever pair is rarest; an empty
// selector selects all of them and none selects nothing; a workload's
// change reaches the entries that select it before or after.
func TestSelection(t *testing.T) {
	s := newSelection()
	for _, w := range []struct {
		ns, name string
		labels   map[string]string
	}{
		{"prod", "web-1", map[string]string{"app": "web", "tier": "front"}},
		{"prod", "web-2", map[string]string{"app": "web", "tier": "back"}},
		{"prod", "db-1", map[string]string{"app": "db", "tier": "back"}},
		{"prod", "db-2", map[string]string{"app": "db", "tier": "back"}},
		{"dev", "web-3", map[string]string{"app": "web", "tier": "front"}},
	} {
		k, wi := selWorkload(w.ns, w.name, w.labels)
		s.setWorkload(w.ns, k, wi)
	}
	entries := map[string]*entry{
		"web":      {ref: nsName{"prod", "web"}, selector: map[string]string{"app": "web"}},
		"back":     {ref: nsName{"prod", "back"}, selector: map[string]string{"tier": "back"}},
		"web-back": {ref: nsName{"prod", "web-back"}, selector: map[string]string{"app": "web", "tier": "back"}},
		"all":      {ref: nsName{"prod", "all"}, selector: map[string]string{}},
		"none":     {ref: nsName{"prod", "none"}},
		"nothing":  {ref: nsName{"prod", "nothing"}, selector: map[string]string{"app": "cache"}},
	}
	for _, e := range entries {
		s.addEntry(e)
	}
	for name, want := range map[string][]string{
		"web":      {"web-1", "web-2"},
		"back":     {"db-1", "db-2", "web-2"},
		"web-back": {"web-2"},
		"all":      {"db-1", "db-2", "web-1", "web-2"},
		"none":     nil,
		"nothing":  nil,
	} {
		if diff := cmp.Diff(want, names(s.selectedBy(entries[name]))); diff != "" {
			t.Errorf("entry %s selects (-want +got):\n%s", name, diff)
		}
	}

	// web-1 moves to the back tier: the entries that could select it
	// before or after are asked, the others not.
	k, moved := selWorkload("prod", "web-1", map[string]string{"app": "web", "tier": "back"})
	old, _ := s.setWorkload("prod", k, moved)
	var asked []string
	s.entriesFor("prod", []map[string]string{old.Endpoint.Labels, moved.Endpoint.Labels}, func(e *entry) {
		asked = append(asked, e.ref.Name)
	})
	slices.Sort(asked)
	// Each entry is indexed under its selector's least key: web and
	// web-back under app=web, back under tier=back, all under none.
	if diff := cmp.Diff([]string{"all", "back", "web", "web-back"}, asked); diff != "" {
		t.Errorf("entries asked (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"web-1", "web-2"}, names(s.selectedBy(entries["web-back"]))); diff != "" {
		t.Errorf("after the move, web-back selects (-want +got):\n%s", diff)
	}

	// Removing every workload and entry of a namespace forgets it.
	for _, n := range []string{"web-1", "web-2", "db-1", "db-2"} {
		k, _ := selWorkload("prod", n, nil)
		s.setWorkload("prod", k, nil)
	}
	for _, e := range entries {
		s.removeEntry(e)
	}
	if _, ok := s.namespaces["prod"]; ok {
		t.Error("an empty namespace is still held")
	}
	if len(s.namespaces["dev"].workloads) != 1 {
		t.Error("another namespace's workload is gone")
	}
}
