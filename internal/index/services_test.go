package index_test

import (
	"slices"
	"testing"
	"time"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
)

const host = "reviews.default.svc.cluster.local"

func kubeService(ns, name string) *model.Service {
	return &model.Service{Hostname: host, Namespace: ns, Name: name, Provider: model.Kubernetes}
}

// serviceEntry returns a ServiceEntry for host created at the given
// minute.
func serviceEntry(ns, name string, minute int) *model.Service {
	return &model.Service{
		Hostname: host, Namespace: ns, Name: name, Provider: model.External,
		CreationTime: time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC),
	}
}

// Winner picks, among the services that declare a hostname in different
// namespaces, the first by model.ComparePrecedence, whatever the order
// of the writes.
func TestServicesWinner(t *testing.T) {
	kube := kubeService("default", "reviews")
	tests := []struct {
		name     string
		services []*model.Service
		want     string // namespace/name
	}{
		{"Kubernetes beats an older ServiceEntry", []*model.Service{serviceEntry("ops", "se", 0), kube}, "default/reviews"},
		{"oldest ServiceEntry", []*model.Service{serviceEntry("a", "new", 5), serviceEntry("b", "old", 1)}, "b/old"},
		{"same age: by namespace", []*model.Service{serviceEntry("zz", "se", 1), serviceEntry("aa", "se", 1)}, "aa/se"},
		{"single", []*model.Service{serviceEntry("ops", "se", 3)}, "ops/se"},
	}
	for _, tt := range tests {
		for _, order := range [][]*model.Service{tt.services, reversed(tt.services)} {
			var x index.Services
			for _, svc := range order {
				x.Put(svc)
			}
			got := x.Winner(host)
			if got == nil || got.Namespace+"/"+got.Name != tt.want {
				t.Errorf("%s: Winner = %v, want %s", tt.name, got, tt.want)
			}
		}
	}

	// Removing the winner hands the hostname to the next.
	var x index.Services
	old, young := serviceEntry("a", "old", 1), serviceEntry("b", "young", 2)
	for _, svc := range []*model.Service{kube, old, young} {
		x.Put(svc)
	}
	for _, step := range []struct {
		remove model.ServiceKey
		want   *model.Service
	}{{kube.Key(), old}, {old.Key(), young}, {young.Key(), nil}} {
		x.Delete(step.remove)
		if got := x.Winner(host); got != step.want {
			t.Errorf("after deleting %s: Winner = %v, want %v", step.remove, got, step.want)
		}
	}
	if got := x.Winner("absent.example.com"); got != nil {
		t.Errorf("Winner of an unknown host = %v", got)
	}
}

// Put replaces the service of a key, in the key's index and in the
// hostname's, and returns the one it replaced.
func TestServicesPut(t *testing.T) {
	var x index.Services
	v1, v2 := serviceEntry("ops", "se", 1), serviceEntry("ops", "se", 1)
	v2.Labels = map[string]string{"version": "2"}
	if prev := x.Put(v1); prev != nil {
		t.Errorf("first Put replaced %v", prev)
	}
	sorted := x.Sorted()
	if prev := x.Put(v2); prev != v1 {
		t.Errorf("second Put replaced %v, want the first version", prev)
	}
	if got := x.Get(v1.Key()); got != v2 {
		t.Errorf("Get = %v, want the second version", got)
	}
	if got := x.Winner(host); got != v2 {
		t.Errorf("Winner = %v, want the second version", got)
	}
	if x.Len() != 1 || x.Cached() != nil {
		t.Errorf("Len = %d, Cached = %v; want one service, the view dropped", x.Len(), x.Cached())
	}
	if len(sorted) != 1 || sorted[0] != v1 {
		t.Errorf("a view handed out earlier changed: %v", sorted)
	}
}

func reversed[T any](s []T) []T {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
