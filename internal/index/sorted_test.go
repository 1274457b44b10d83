package index_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
)

// endpoint returns an endpoint of port "http" in cluster c1.
func endpoint(ip string, port uint32) *model.Endpoint {
	return &model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: port, ServicePortName: "http", Cluster: "c1",
	}
}

// A Trail holds the endpoints of the old list that the new one keeps in
// order: at the same index, or a few places on after endpoints removed;
// not an endpoint moved back, nor one past a run of new endpoints longer
// than it looks.
func TestTrail(t *testing.T) {
	old := make([]*model.Endpoint, 12)
	for i := range old {
		old[i] = endpoint(fmt.Sprintf("10.1.0.%d", i+1), 9080)
	}
	fresh := func() *model.Endpoint { return endpoint("10.9.9.9", 9080) }
	tests := []struct {
		name string
		next []*model.Endpoint
		want []bool // Holds for each endpoint of next
	}{
		{"the same list", old[:4], []bool{true, true, true, true}},
		{"one replaced", []*model.Endpoint{old[0], fresh(), old[2]}, []bool{true, false, true}},
		{"five replaced in a row, at their places", []*model.Endpoint{old[0], fresh(), fresh(), fresh(), fresh(), fresh(), old[6]}, []bool{true, false, false, false, false, false, true}},
		{"two removed", []*model.Endpoint{old[0], old[3], old[4]}, []bool{true, true, true}},
		{"one added", []*model.Endpoint{old[0], fresh(), old[1], old[2]}, []bool{true, false, true, true}},
		{"five removed: past the window", []*model.Endpoint{old[0], old[6], old[7]}, []bool{true, false, false}},
		{"two swapped", []*model.Endpoint{old[1], old[0], old[2]}, []bool{true, false, true}},
		{"one repeated", []*model.Endpoint{old[0], old[0], old[1]}, []bool{true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := index.NewTrail(old)
			var got []bool
			for i, ep := range tt.next {
				got = append(got, tr.Holds(i, ep))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Holds = %v, want %v", got, tt.want)
			}
		})
	}
	var zero index.Trail
	if zero.Holds(0, old[0]) {
		t.Error("the zero Trail holds an endpoint")
	}
}

// MergeEndpoints gives what sorting the concatenated lists gives, and
// hands a single list back as it is.
func TestMergeEndpoints(t *testing.T) {
	in := func(cluster model.ClusterID, ips ...string) []*model.Endpoint {
		var out []*model.Endpoint
		for _, ip := range ips {
			ep := endpoint(ip, 80)
			ep.Cluster = cluster
			out = append(out, ep)
		}
		return out
	}
	tests := []struct {
		name  string
		lists [][]*model.Endpoint
	}{
		{name: "none"},
		{name: "one empty", lists: [][]*model.Endpoint{nil}},
		{name: "two", lists: [][]*model.Endpoint{in("b", "10.0.0.1", "10.0.0.3"), in("a", "10.0.0.2")}},
		{name: "interleaved", lists: [][]*model.Endpoint{in("a", "10.0.0.1", "10.0.0.3", "10.0.0.5"), in("a", "10.0.0.2", "10.0.0.4")}},
		{name: "equal endpoints", lists: [][]*model.Endpoint{in("a", "10.0.0.1", "10.0.0.2"), in("a", "10.0.0.1", "10.0.0.2")}},
		{name: "three, one empty", lists: [][]*model.Endpoint{in("c", "10.0.0.9"), nil, in("a", "10.0.0.9", "10.1.0.0")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []*model.Endpoint
			for _, l := range tt.lists {
				want = append(want, l...)
			}
			slices.SortStableFunc(want, model.CompareEndpoints)
			got := index.MergeEndpoints(tt.lists)
			if !slices.Equal(got, want) {
				t.Errorf("MergeEndpoints = %v, want %v", got, want)
			}
		})
	}
	one := in("a", "10.0.0.1", "10.0.0.2")
	if got := index.MergeEndpoints([][]*model.Endpoint{one}); &got[0] != &one[0] {
		t.Error("a single list was copied")
	}
}
