package store_test

import (
	"slices"
	"testing"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A list already in order is kept as it is, so a registry's published
// list can be passed on without a copy; another is sorted.
func TestSetEndpointsKeepsASortedList(t *testing.T) {
	s := store.New()
	svc := kubeService("default", "reviews")
	s.UpsertService(svc)

	sorted := []*model.Endpoint{endpoint("10.1.0.1", 9080), endpoint("10.1.0.2", 9080)}
	s.SetEndpoints(kubeShard, svc.Key(), sorted)
	got := s.Endpoints(svc.Key(), registry.EndpointQuery{})
	if len(got) != 2 || &got[0] != &sorted[0] {
		t.Error("a sorted list was not kept as it was given")
	}

	unsorted := []*model.Endpoint{endpoint("10.1.0.9", 9080), endpoint("10.1.0.3", 9080)}
	s.SetEndpoints(kubeShard, svc.Key(), unsorted)
	got = s.Endpoints(svc.Key(), registry.EndpointQuery{})
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
			s := store.New()
			svc := kubeService("default", "reviews")
			s.UpsertService(svc)
			s.SetEndpoints(kubeShard, svc.Key(), published())
			prev := s.Endpoints(svc.Key(), registry.EndpointQuery{})
			s.SetEndpoints(kubeShard, svc.Key(), tt.next(prev))
			var got []string
			for _, ep := range s.Endpoints(svc.Key(), registry.EndpointQuery{}) {
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
