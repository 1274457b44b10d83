package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A list already in order is kept as it is, so a registry's published
// list can be passed on without a copy; another is sorted.
func TestSetEndpointsKeepsASortedList(t *testing.T) {
	s := store.New(kubeShard)
	svc := kubeService("default", "reviews")
	s.UpsertService(svc)

	sorted := []*model.Endpoint{endpoint("10.1.0.1", 9080), endpoint("10.1.0.2", 9080)}
	s.SetEndpoints(svc.Key(), sorted)
	got := s.Reader().Endpoints(svc.Key(), registry.EndpointQuery{})
	if len(got) != 2 || &got[0] != &sorted[0] {
		t.Error("a sorted list was not kept as it was given")
	}

	unsorted := []*model.Endpoint{endpoint("10.1.0.9", 9080), endpoint("10.1.0.3", 9080)}
	s.SetEndpoints(svc.Key(), unsorted)
	got = s.Reader().Endpoints(svc.Key(), registry.EndpointQuery{})
	if len(got) != 2 || got[0].Address() != "10.1.0.3" || got[1].Address() != "10.1.0.9" {
		t.Errorf("an unsorted list was kept as %v %v, want it sorted", got[0].Address(), got[1].Address())
	}
}

// A list that is the published one with some endpoints replaced is told
// sorted from the replaced endpoints alone when each sorts where the one
// it replaces did; a replacement that sorts elsewhere, or a list of
// another length, is sorted as any other (see FuzzSortedAfter for how a
// list with endpoints removed or added is told sorted).
func TestSetEndpointsReplacingPublishedEndpoints(t *testing.T) {
	healthy := func(ip string) *model.Endpoint { return endpoint(ip, 9080) }
	draining := func(ip string) *model.Endpoint {
		ep := endpoint(ip, 9080)
		ep.Health = model.Draining
		return ep
	}
	published := func() []*model.Endpoint {
		return []*model.Endpoint{healthy("10.1.0.1"), healthy("10.1.0.2"), healthy("10.1.0.3")}
	}
	tests := []struct {
		name string
		next func(prev []*model.Endpoint) []*model.Endpoint
		want []string // addresses in order, and "!" after a draining one
	}{{
		name: "one replaced in place",
		next: func(prev []*model.Endpoint) []*model.Endpoint {
			return []*model.Endpoint{prev[0], draining("10.1.0.2"), prev[2]}
		},
		want: []string{"10.1.0.1", "10.1.0.2!", "10.1.0.3"},
	}, {
		name: "every one replaced in place",
		next: func([]*model.Endpoint) []*model.Endpoint {
			return []*model.Endpoint{draining("10.1.0.1"), draining("10.1.0.2"), draining("10.1.0.3")}
		},
		want: []string{"10.1.0.1!", "10.1.0.2!", "10.1.0.3!"},
	}, {
		name: "a replacement that sorts last",
		next: func(prev []*model.Endpoint) []*model.Endpoint {
			return []*model.Endpoint{healthy("10.1.0.9"), prev[1], prev[2]}
		},
		want: []string{"10.1.0.2", "10.1.0.3", "10.1.0.9"},
	}, {
		name: "two swapped",
		next: func(prev []*model.Endpoint) []*model.Endpoint {
			return []*model.Endpoint{prev[1], prev[0], prev[2]}
		},
		want: []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"},
	}, {
		name: "one more, out of order",
		next: func(prev []*model.Endpoint) []*model.Endpoint {
			return append([]*model.Endpoint{healthy("10.1.0.4")}, prev...)
		},
		want: []string{"10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"},
	}, {
		name: "one removed, one more in order",
		next: func(prev []*model.Endpoint) []*model.Endpoint {
			return []*model.Endpoint{prev[0], prev[2], healthy("10.1.0.4")}
		},
		want: []string{"10.1.0.1", "10.1.0.3", "10.1.0.4"},
	}, {
		name: "one removed, one more out of order between kept ones",
		next: func(prev []*model.Endpoint) []*model.Endpoint {
			return []*model.Endpoint{prev[0], healthy("10.1.0.5"), prev[2]}
		},
		want: []string{"10.1.0.1", "10.1.0.3", "10.1.0.5"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store.New(kubeShard)
			svc := kubeService("default", "reviews")
			s.UpsertService(svc)
			s.SetEndpoints(svc.Key(), published())
			prev := s.Reader().Endpoints(svc.Key(), registry.EndpointQuery{})
			s.SetEndpoints(svc.Key(), tt.next(prev))
			var got []string
			for _, ep := range s.Reader().Endpoints(svc.Key(), registry.EndpointQuery{}) {
				a := ep.Address()
				if ep.Health == model.Draining {
					a += "!"
				}
				got = append(got, a)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("stored %v, want %v", got, tt.want)
			}
		})
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
			tr := store.NewTrail(old)
			var got []bool
			for i, ep := range tt.next {
				got = append(got, tr.Holds(i, ep))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Holds = %v, want %v", got, tt.want)
			}
		})
	}
	var zero store.Trail
	if zero.Holds(0, old[0]) {
		t.Error("the zero Trail holds an endpoint")
	}
}
