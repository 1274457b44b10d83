package aggregate

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var (
	kubeA = model.ShardKey{Provider: model.Kubernetes, Cluster: "a"}
	kubeB = model.ShardKey{Provider: model.Kubernetes, Cluster: "b"}
	seA   = model.ShardKey{Provider: model.External, Cluster: "a"}
)

// storeService returns a service of provider p for the hostname
// reviews.default.svc.cluster.local, with one http port.
func storeService(p model.Provider, ns, name string) *model.Service {
	return &model.Service{
		Hostname: "reviews.default.svc.cluster.local", Namespace: ns, Name: name,
		Provider: p, Ports: []model.Port{httpPort},
		CreationTime: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// storeEndpoint returns an endpoint of port "http" in the shard's
// cluster.
func storeEndpoint(shard model.ShardKey, ip string) *model.Endpoint {
	return &model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: 8080, ServicePortName: "http", Cluster: shard.Cluster,
	}
}

// subscribed returns a store and a recorder subscribed to it; the
// subscription ends with the test.
func subscribed(t *testing.T) (*mergedStore, *recorder) {
	s := newMergedStore()
	rec := newRecorder()
	t.Cleanup(s.Subscribe(rec))
	return s, rec
}

// expectEvents checks that the events recorded after the first `from`
// are want, and returns how many there are in all.
func expectEvents(t *testing.T, rec *recorder, from int, want ...string) int {
	t.Helper()
	log := rec.log()
	if got := log[from:]; !slices.Equal(got, want) {
		t.Errorf("events:\n  %q\nwant:\n  %q", got, want)
	}
	return len(log)
}

// A shard's endpoints belong to a service only while it comes from the
// shard's provider: a Kubernetes Service does not take a ServiceEntry's
// endpoints for its key, and a change of provider withdraws one
// provider's shards before the update and releases the other's after.
func TestStoreShardVisibility(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := subscribed(t)
		kube := storeService(model.Kubernetes, "default", "reviews")
		key := kube.Key().String()
		s.upsertService(kube)
		s.setEndpoints(kubeA, kube.Key(), []*model.Endpoint{storeEndpoint(kubeA, "10.1.0.1")})
		s.setEndpoints(seA, kube.Key(), []*model.Endpoint{storeEndpoint(seA, "10.9.0.1")})
		synctest.Wait()
		n := expectEvents(t, rec, 0, "service add "+key, "endpoints Kubernetes/a "+key+" 1")
		if got := s.Endpoints(kube.Key(), registry.EndpointQuery{}); len(got) != 1 || got[0].Address() != "10.1.0.1" {
			t.Errorf("Endpoints = %v, want only the Kubernetes shard's", got)
		}

		se := storeService(model.External, "default", "reviews")
		s.upsertService(se)
		synctest.Wait()
		n = expectEvents(t, rec, n, "endpoints Kubernetes/a "+key+" 0", "service update "+key, "endpoints External/a "+key+" 1")
		if got := s.ProxyTargets("", netip.MustParseAddr("10.1.0.1")); len(got) != 0 {
			t.Errorf("ProxyTargets through a hidden shard = %v", got)
		}
		if got := s.ProxyTargets("", netip.MustParseAddr("10.9.0.1")); len(got) != 1 {
			t.Errorf("ProxyTargets through the visible shard = %v, want one target", got)
		}

		// A hidden shard's list changes silently.
		s.setEndpoints(kubeA, kube.Key(), nil)
		s.setEndpoints(seA, kube.Key(), nil)
		synctest.Wait()
		expectEvents(t, rec, n, "endpoints External/a "+key+" 0")
	})
}

// The lists of several visible shards merge into one list sorted by
// model.CompareEndpoints (port, cluster, address); one shard's list is
// answered as it is.
func TestStoreMergesShards(t *testing.T) {
	s := newMergedStore()
	svc := storeService(model.Kubernetes, "default", "reviews")
	s.upsertService(svc)
	a := []*model.Endpoint{storeEndpoint(kubeA, "10.1.0.1"), storeEndpoint(kubeA, "10.1.0.3")}
	s.setEndpoints(kubeA, svc.Key(), a)
	if got := s.Endpoints(svc.Key(), registry.EndpointQuery{}); &got[0] != &a[0] {
		t.Error("one shard's list was not answered as it was given")
	}
	s.setEndpoints(kubeB, svc.Key(), []*model.Endpoint{storeEndpoint(kubeB, "10.1.0.2")})
	var got []string
	for _, ep := range s.Endpoints(svc.Key(), registry.EndpointQuery{}) {
		got = append(got, string(ep.Cluster)+"/"+ep.Address())
	}
	if want := []string{"a/10.1.0.1", "a/10.1.0.3", "b/10.1.0.2"}; !slices.Equal(got, want) {
		t.Errorf("Endpoints = %v, want %v", got, want)
	}
	if got := s.Endpoints(svc.Key(), registry.EndpointQuery{Cluster: "b"}); len(got) != 1 {
		t.Errorf("Endpoints of cluster b = %v, want one", got)
	}
}

// The state is a function of the writes, not of their order: every order
// of the same writes gives the same dump, the same answers, and the same
// initial events to a subscriber that comes last.
func TestStoreOrderIndependence(t *testing.T) {
	svc := storeService(model.Kubernetes, "default", "reviews")
	se := storeService(model.External, "ops", "reviews-se")
	writes := []func(*mergedStore){
		func(s *mergedStore) { s.upsertService(svc) },
		func(s *mergedStore) { s.upsertService(se) },
		func(s *mergedStore) {
			s.setEndpoints(kubeA, svc.Key(), []*model.Endpoint{storeEndpoint(kubeA, "10.1.0.2"), storeEndpoint(kubeA, "10.1.0.1")})
		},
		func(s *mergedStore) { s.setEndpoints(seA, se.Key(), []*model.Endpoint{storeEndpoint(seA, "10.9.0.1")}) },
		func(s *mergedStore) {
			s.upsertWorkload(&model.WorkloadInstance{Kind: model.KindPod, Namespace: "default", Name: "reviews-1",
				Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.1")}, Cluster: "a"}})
		},
		func(s *mergedStore) {
			s.setDiagnostics("ServiceEntry/ops/reviews-se", []model.Diagnostic{{Severity: model.Warning, Kind: "ServiceEntry", Namespace: "ops", Name: "reviews-se", Message: "odd"}})
		},
	}
	var want string
	var wantInitial []string
	permutations(len(writes), func(order []int) {
		synctest.Test(t, func(t *testing.T) {
			s := newMergedStore()
			for _, i := range order {
				writes[i](s)
			}
			var buf bytes.Buffer
			if err := registry.WriteJSON(&buf, s); err != nil {
				t.Fatal(err)
			}
			rec := newRecorder()
			defer s.Subscribe(rec)()
			synctest.Wait()
			initial := rec.log()
			if want == "" {
				want, wantInitial = buf.String(), initial
				return
			}
			if buf.String() != want {
				t.Fatalf("writes in order %v give a different state:\n%s\nwant:\n%s", order, buf.String(), want)
			}
			if !slices.Equal(initial, wantInitial) {
				t.Fatalf("writes in order %v give different initial events:\n%v\nwant:\n%v", order, initial, wantInitial)
			}
			if got := s.GetService(svc.Hostname); got != svc {
				t.Fatalf("writes in order %v: GetService = %v, want the Kubernetes Service", order, got.Key())
			}
		})
	})
}

// permutations calls f with every permutation of 0..n-1 (Heap's algorithm).
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var gen func(k int)
	gen = func(k int) {
		if k == 1 {
			f(slices.Clone(p))
			return
		}
		for i := range k - 1 {
			gen(k - 1)
			if k%2 == 0 {
				p[i], p[k-1] = p[k-1], p[i]
			} else {
				p[0], p[k-1] = p[k-1], p[0]
			}
		}
		gen(k - 1)
	}
	gen(n)
}
