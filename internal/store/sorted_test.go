package store_test

import (
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
