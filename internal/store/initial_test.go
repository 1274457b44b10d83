package store_test

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The replay of the state to a new subscriber is marked Initial; changes
// after it are not.
func TestInitialMarksTheReplayOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		reviews := kubeService("default", "reviews")
		s.UpsertService(reviews)
		s.SetEndpoints(kubeShard, reviews.Key(), []*model.Endpoint{endpoint("10.1.0.1", 9080)})
		s.UpsertWorkload(pod("default", "reviews-1", "10.1.0.1"))

		var mu sync.Mutex
		var got []bool
		record := func(initial bool) { mu.Lock(); got = append(got, initial); mu.Unlock() }
		defer s.Subscribe(registry.HandlerFuncs{
			ServiceFunc:   func(e registry.ServiceEvent) { record(e.Initial) },
			EndpointsFunc: func(e registry.EndpointsEvent) { record(e.Initial) },
			WorkloadFunc:  func(e registry.WorkloadEvent) { record(e.Initial) },
		})()
		s.UpsertService(kubeService("default", "details"))
		s.SetEndpoints(kubeShard, reviews.Key(), nil)
		s.DeleteWorkload(pod("default", "reviews-1", "10.1.0.1").Key())
		synctest.Wait()

		want := []bool{true, true, true, false, false, false}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != len(want) {
			t.Fatalf("got %d events (%v), want %d", len(got), got, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d: Initial = %v, want %v", i, got[i], want[i])
			}
		}
	})
}
