package serviceentry

import (
	"log/slog"
	"reflect"
	"testing"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
)

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestWorkloadEntryLabelsShared: WorkloadEntries whose labels (with the
// topology labels added) are equal share one map, which their endpoints
// share too; a changed or deleted entry lets go of it.
func TestWorkloadEntryLabelsShared(t *testing.T) {
	s := newState(testCtx, store.New(), slog.New(slog.DiscardHandler))
	d := dirty{}
	s.setServiceEntry(nsName{"ns", "sel"}, loadSE(t, selSE), nsView{}, d)
	for _, w := range []string{we("w1", "ns", "a", "10.0.0.1"), we("w2", "ns", "a", "10.0.0.2")} {
		e := loadWE(t, w)
		s.setWorkloadEntry(nsName{e.Namespace, e.Name}, e, d)
	}
	wi := func(name string) *model.WorkloadInstance {
		return s.sel.workload("ns", model.WorkloadKey{Cluster: testCtx.Cluster, Kind: model.KindWorkloadEntry, Namespace: "ns", Name: name})
	}
	w1, w2 := wi("w1"), wi("w2")
	if !sameMap(w1.Endpoint.Labels, w2.Endpoint.Labels) || w1.Endpoint.Labels[labelTopologyCluster] != "c1" {
		t.Fatalf("labels %v and %v: want one map, with the cluster label", w1.Endpoint.Labels, w2.Endpoint.Labels)
	}
	e := s.entries[nsName{"ns", "sel"}]
	if len(e.selected) != 2 || !sameMap(e.selected[0].Labels, w1.Endpoint.Labels) || !sameMap(e.selected[1].Labels, w1.Endpoint.Labels) {
		t.Fatalf("endpoints %v: want both on the workloads' one map", e.selected)
	}
	e1 := loadWE(t, we("w1", "ns", "b", "10.0.0.1"))
	s.setWorkloadEntry(nsName{"ns", "w1"}, e1, d)
	if sameMap(wi("w1").Endpoint.Labels, w2.Endpoint.Labels) || wi("w1").Endpoint.Labels["app"] != "b" || s.labels.Len() != 2 {
		t.Fatalf("after w1's change: labels %v, %d maps held; want app=b, 2 maps", wi("w1").Endpoint.Labels, s.labels.Len())
	}
	s.setWorkloadEntry(nsName{"ns", "w1"}, nil, d)
	s.setWorkloadEntry(nsName{"ns", "w2"}, nil, d)
	if s.labels.Len() != 0 {
		t.Fatalf("deleted entries' labels still held: %d", s.labels.Len())
	}
}
