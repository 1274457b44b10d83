package kube

import (
	"maps"
	"reflect"
	"testing"
	"unsafe"

	"github.com/meshreg/meshreg/model"
)

// TestSharerLabels: a sharer hands out endpointLabels's map for the inputs,
// the same map for equal inputs (equal labels in another map, the same
// topology), and maps of their own for inputs that differ in any part.
func TestSharerLabels(t *testing.T) {
	zoneA := model.Locality{Region: "r", Zone: "a"}
	zoneB := model.Locality{Region: "r", Zone: "b"}
	type in struct {
		labels  map[string]string
		loc     model.Locality
		network model.NetworkID
	}
	inputs := []in{
		{map[string]string{"app": "x", "version": "v1"}, zoneA, ""},
		{map[string]string{"app": "x", "version": "v1"}, zoneA, ""},   // equal to 0, another map
		{map[string]string{"version": "v1", "app": "x"}, zoneA, ""},   // equal to 0, built in another order
		{map[string]string{"app": "x", "version": "v1"}, zoneB, ""},   // another zone
		{map[string]string{"app": "x", "version": "v1"}, zoneA, "n1"}, // another network
		{map[string]string{"app": "v1", "version": "x"}, zoneA, ""},   // values swapped
		{map[string]string{"app": "x"}, zoneA, ""},                    // a label fewer
		{nil, zoneA, ""},
		{map[string]string{}, zoneA, ""}, // equal to nil
	}
	// The inputs that must share a map have the same group.
	group := []int{0, 0, 0, 3, 4, 5, 6, 7, 7}

	s := newEndpointSharer()
	got := make([]map[string]string, len(inputs))
	for i, x := range inputs {
		got[i] = s.labels(x.labels, x.loc, x.network, "c1")
		if want := endpointLabels(x.labels, x.loc, x.network, "c1"); !maps.Equal(got[i], want) {
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
	var none *endpointSharer
	a := none.labels(inputs[0].labels, zoneA, "", "c1")
	b := none.labels(inputs[1].labels, zoneA, "", "c1")
	if id(a) == id(b) || !maps.Equal(a, b) {
		t.Errorf("a nil sharer: maps %v and %v, shared %v; want equal, not shared", a, b, id(a) == id(b))
	}
}

// TestSharerIdentity: a sharer hands out model.SpiffeIdentity's string,
// the same string for the same namespace and account.
func TestSharerIdentity(t *testing.T) {
	s := newEndpointSharer()
	inputs := [][2]string{{"a", "sa1"}, {"a", "sa1"}, {"a", "sa2"}, {"b", "sa1"}, {"a", ""}, {"a/sa", "1"}}
	got := make([]string, len(inputs))
	for i, in := range inputs {
		got[i] = s.identity("td", in[0], in[1])
		if want := model.SpiffeIdentity("td", in[0], in[1]); got[i] != want {
			t.Errorf("identity(%q, %q) = %q, want %q", in[0], in[1], got[i], want)
		}
	}
	if unsafe.StringData(got[0]) != unsafe.StringData(got[1]) {
		t.Error("the same namespace and account: two strings, want one shared")
	}
	if got[0] == got[2] || got[0] == got[3] || got[2] == got[3] {
		t.Errorf("another account or namespace shares an identity: %q", got[:4])
	}
	var none *endpointSharer
	if got := none.identity("td", "a", "sa1"); got != model.SpiffeIdentity("td", "a", "sa1") {
		t.Errorf("a nil sharer: identity %q", got)
	}
}
