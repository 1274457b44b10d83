package kube

import (
	"maps"
	"reflect"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// TestLabelSharer: a sharer hands out endpointLabels's map for the inputs,
// the same map for equal inputs (equal labels in another map, the same
// topology), and maps of their own for inputs that differ in any part.
func TestLabelSharer(t *testing.T) {
	zoneA := model.Locality{Region: "r", Zone: "a"}
	zoneB := model.Locality{Region: "r", Zone: "b"}
	type in struct {
		labels  map[string]string
		loc     model.Locality
		network model.NetworkID
		node    string
	}
	inputs := []in{
		{map[string]string{"app": "x", "version": "v1"}, zoneA, "", "n"},
		{map[string]string{"app": "x", "version": "v1"}, zoneA, "", "n"},   // equal to 0, another map
		{map[string]string{"version": "v1", "app": "x"}, zoneA, "", "n"},   // equal to 0, built in another order
		{map[string]string{"app": "x", "version": "v1"}, zoneB, "", "n"},   // another zone
		{map[string]string{"app": "x", "version": "v1"}, zoneA, "n1", "n"}, // another network
		{map[string]string{"app": "v1", "version": "x"}, zoneA, "", "n"},   // values swapped
		{map[string]string{"app": "x"}, zoneA, "", "n"},                    // a label fewer
		{nil, zoneA, "", "n"},
		{map[string]string{}, zoneA, "", "n"},                            // equal to nil
		{map[string]string{"app": "x", "version": "v1"}, zoneA, "", "m"}, // another node
	}
	// The inputs that must share a map have the same group.
	group := []int{0, 0, 0, 3, 4, 5, 6, 7, 7, 9}

	s := newLabelSharer()
	got := make([]map[string]string, len(inputs))
	for i, x := range inputs {
		got[i] = s.labels(x.labels, x.loc, x.network, x.node, "c1")
		if want := endpointLabels(x.labels, x.loc, x.network, x.node, "c1"); !maps.Equal(got[i], want) {
			t.Errorf("input %d: labels %v, want %v", i, got[i], want)
		}
	}
	id := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	for i := range inputs {
		for j := range i {
			want := group[i] == group[j]
			if shared := id(got[i]) == id(got[j]); shared != want {
				t.Errorf("inputs %d and %d: shared map %v, want %v", j, i, shared, want)
			}
		}
	}

	// A nil sharer shares nothing.
	var none *labelSharer
	a := none.labels(inputs[0].labels, zoneA, "", "n", "c1")
	b := none.labels(inputs[1].labels, zoneA, "", "n", "c1")
	if id(a) == id(b) || !maps.Equal(a, b) {
		t.Errorf("a nil sharer: maps %v and %v, shared %v; want equal, not shared", a, b, id(a) == id(b))
	}
}
