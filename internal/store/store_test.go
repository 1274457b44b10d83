package store_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

const (
	reviewsKey = "default/reviews.default.svc.cluster.local"
	kubeEps    = "endpoints Kubernetes/c1 " + reviewsKey
)

func TestServiceEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, r, rec := newStore(t)

		s.UpsertService(kubeService("default", "reviews"))
		synctest.Wait()
		rec.expect(t, "add service "+reviewsKey)

		// An equal service, as a new value: nothing to publish.
		s.UpsertService(kubeService("default", "reviews"))
		synctest.Wait()
		rec.expect(t)

		changed := kubeService("default", "reviews")
		changed.Ports = append(changed.Ports, model.Port{Name: "grpc", Port: 9090, Protocol: model.GRPC})
		s.UpsertService(changed)
		synctest.Wait()
		rec.expect(t, "update service "+reviewsKey)
		if got := r.ServiceByKey(changed.Key()); got != changed {
			t.Errorf("ServiceByKey after update = %v, want the new value", got)
		}

		s.DeleteService(changed.Key())
		s.DeleteService(changed.Key()) // absent: nothing
		synctest.Wait()
		rec.expect(t, "delete service "+reviewsKey)
		if got := r.ServiceByKey(changed.Key()); got != nil {
			t.Errorf("ServiceByKey after delete = %v, want nil", got)
		}
	})
}

// Update and delete events carry the values before and after.
func TestServiceEventValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		var got []registry.ServiceEvent
		defer s.Subscribe(registry.HandlerFuncs{ServiceFunc: func(e registry.ServiceEvent) { got = append(got, e) }})()
		v1, v2 := kubeService("default", "reviews"), kubeService("default", "reviews")
		v2.Labels = map[string]string{"version": "2"}
		s.UpsertService(v1)
		s.UpsertService(v2)
		s.DeleteService(v2.Key())
		synctest.Wait()
		want := []registry.ServiceEvent{
			{Type: model.EventAdd, Current: v1},
			{Type: model.EventUpdate, Previous: v1, Current: v2},
			{Type: model.EventDelete, Previous: v2},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d service events, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

func TestEndpointEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, r, rec := newStore(t)
		svc := kubeService("default", "reviews")
		s.UpsertService(svc)
		synctest.Wait()
		rec.take()

		s.SetEndpoints(kubeShard, svc.Key(), []*model.Endpoint{endpoint("10.1.0.2", 9080), endpoint("10.1.0.1", 9080)})
		synctest.Wait()
		rec.expect(t, kubeEps+" [http/10.1.0.1:9080 http/10.1.0.2:9080]")

		// Equal endpoints in another order, as new values: nothing.
		s.SetEndpoints(kubeShard, svc.Key(), []*model.Endpoint{endpoint("10.1.0.1", 9080), endpoint("10.1.0.2", 9080)})
		synctest.Wait()
		rec.expect(t)

		held := r.Endpoints(svc.Key(), registry.EndpointQuery{})
		s.SetEndpoints(kubeShard, svc.Key(), []*model.Endpoint{endpoint("10.1.0.3", 9080)})
		synctest.Wait()
		rec.expect(t, kubeEps+" [http/10.1.0.3:9080]")
		if len(held) != 2 || held[0].Address() != "10.1.0.1" {
			t.Errorf("a list returned earlier was modified by a later write: %v", held)
		}

		s.SetEndpoints(kubeShard, svc.Key(), nil)
		s.SetEndpoints(kubeShard, svc.Key(), []*model.Endpoint{}) // already empty: nothing
		synctest.Wait()
		rec.expect(t, kubeEps+" []")
		if got := r.Endpoints(svc.Key(), registry.EndpointQuery{}); len(got) != 0 {
			t.Errorf("Endpoints after clearing = %v", got)
		}
	})
}

// Endpoints that arrive before their service are kept but not published
// until the service comes; deleting the service withdraws them first; a
// service that comes back gets them again. The state never depends on the
// order.
func TestEndpointsBeforeService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, r, rec := newStore(t)
		svc := kubeService("default", "reviews")
		ip := netip.MustParseAddr("10.1.0.1")

		s.SetEndpoints(kubeShard, svc.Key(), []*model.Endpoint{endpoint("10.1.0.1", 9080)})
		synctest.Wait()
		rec.expect(t)
		if got := r.Endpoints(svc.Key(), registry.EndpointQuery{}); got != nil {
			t.Errorf("Endpoints of an absent service = %v, want nil", got)
		}
		if got := r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip}}); len(got) != 0 {
			t.Errorf("ProxyTargets through an absent service = %v", got)
		}

		s.UpsertService(svc)
		synctest.Wait()
		rec.expect(t, "add service "+reviewsKey, kubeEps+" [http/10.1.0.1:9080]")
		if got := r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip}}); len(got) != 1 {
			t.Errorf("ProxyTargets once the service is there = %v, want one target", got)
		}

		s.DeleteService(svc.Key())
		synctest.Wait()
		rec.expect(t, kubeEps+" []", "delete service "+reviewsKey)
		if got := r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip}}); len(got) != 0 {
			t.Errorf("ProxyTargets after the service's delete = %v", got)
		}

		s.UpsertService(svc)
		synctest.Wait()
		rec.expect(t, "add service "+reviewsKey, kubeEps+" [http/10.1.0.1:9080]")
	})
}

func TestWorkloadEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, r, rec := newStore(t)
		const key = "c1/Pod/default/reviews-1"
		ip1, ip2 := netip.MustParseAddr("10.1.0.1"), netip.MustParseAddr("10.1.0.2")

		s.UpsertWorkload(pod("default", "reviews-1", "10.1.0.1"))
		s.UpsertWorkload(pod("default", "reviews-1", "10.1.0.1")) // equal: nothing
		synctest.Wait()
		rec.expect(t, "add workload "+key)
		held := r.WorkloadsByIP(ip1)

		s.UpsertWorkload(pod("default", "other", "10.1.0.1"))
		s.UpsertWorkload(pod("default", "reviews-1", "10.1.0.2")) // moved
		synctest.Wait()
		rec.expect(t, "add workload c1/Pod/default/other", "update workload "+key)
		if len(held) != 1 || held[0].Name != "reviews-1" {
			t.Errorf("a WorkloadsByIP answer was modified by later writes: %v", held)
		}
		if got := r.WorkloadsByIP(ip1); len(got) != 1 || got[0].Name != "other" {
			t.Errorf("WorkloadsByIP(%s) = %v, want only other", ip1, got)
		}
		if got := r.WorkloadsByIP(ip2); len(got) != 1 || got[0].Name != "reviews-1" {
			t.Errorf("WorkloadsByIP(%s) = %v, want reviews-1", ip2, got)
		}

		// New metadata at the same addresses: the new instance takes the
		// old one's place in the IP index, next to another workload of
		// that IP; an answer already handed out keeps the old one.
		s.UpsertWorkload(pod("default", "another", "10.1.0.2"))
		held = r.WorkloadsByIP(ip2)
		relabeled := pod("default", "reviews-1", "10.1.0.2")
		relabeled.Endpoint.Labels = map[string]string{"version": "v2"}
		s.UpsertWorkload(relabeled)
		synctest.Wait()
		rec.expect(t, "add workload c1/Pod/default/another", "update workload "+key)
		if got := r.WorkloadsByIP(ip2); len(got) != 2 || got[0].Name != "another" || got[1] != relabeled {
			t.Errorf("WorkloadsByIP(%s) after relabel = %v, want another and the relabeled reviews-1", ip2, got)
		}
		if len(held) != 2 || held[1] == relabeled || held[1].Name != "reviews-1" {
			t.Errorf("a WorkloadsByIP answer was modified by a relabel: %v", held)
		}
		s.DeleteWorkload(pod("default", "another").Key())
		synctest.Wait()
		rec.expect(t, "delete workload c1/Pod/default/another")

		w := pod("default", "reviews-1")
		s.DeleteWorkload(w.Key())
		s.DeleteWorkload(w.Key()) // absent: nothing
		synctest.Wait()
		rec.expect(t, "delete workload "+key)
		if got := r.WorkloadsByIP(ip2); len(got) != 0 {
			t.Errorf("WorkloadsByIP after delete = %v", got)
		}
		if got := r.Workloads(); len(got) != 1 || got[0].Name != "other" {
			t.Errorf("Workloads() = %v, want only other", got)
		}
	})
}

// A late subscriber first receives the state: services (sorted), then
// endpoint lists, then workloads.
func TestSubscribeInitialState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		ratings, reviews := kubeService("default", "ratings"), kubeService("default", "reviews")
		s.UpsertWorkload(pod("default", "reviews-1", "10.1.0.1"))
		s.UpsertService(reviews)
		s.UpsertService(ratings)
		s.SetEndpoints(kubeShard, reviews.Key(), []*model.Endpoint{endpoint("10.1.0.1", 9080)})
		s.SetEndpoints(kubeShard, ratings.Key(), []*model.Endpoint{}) // no list: no event

		rec := &recorder{}
		defer s.Subscribe(rec)()
		s.UpsertService(kubeService("default", "details"))
		synctest.Wait()
		rec.expect(t,
			"add service default/ratings.default.svc.cluster.local",
			"add service "+reviewsKey,
			kubeEps+" [http/10.1.0.1:9080]",
			"add workload c1/Pod/default/reviews-1",
			"add service default/details.default.svc.cluster.local",
		)
	})
}

// The state is a function of the writes, not of their order: every order
// of the same writes gives the same dump, the same answers, and the same
// initial events to a subscriber that comes last. Two entries declare one
// host in two namespaces; the older wins it.
func TestOrderIndependence(t *testing.T) {
	const host = "reviews.example.com"
	older, newer := serviceEntry("ops", "reviews-old", host, 1), serviceEntry("apps", "reviews-new", host, 2)
	writes := []func(*store.Store){
		func(s *store.Store) { s.UpsertService(newer) },
		func(s *store.Store) { s.UpsertService(older) },
		func(s *store.Store) {
			s.SetEndpoints(seShard, newer.Key(), []*model.Endpoint{endpoint("10.1.0.2", 80), endpoint("10.1.0.1", 80)})
		},
		func(s *store.Store) {
			s.SetEndpoints(seShard, older.Key(), []*model.Endpoint{endpoint("10.9.0.1", 80)})
		},
		func(s *store.Store) { s.UpsertWorkload(pod("ops", "reviews-1", "10.9.0.1")) },
		func(s *store.Store) {
			s.SetDiagnostics("ServiceEntry/ops/reviews-old", []model.Diagnostic{{Severity: model.Warning, Kind: "ServiceEntry", Namespace: "ops", Name: "reviews-old", Message: "odd"}})
		},
	}
	var want string
	var wantInitial []string
	permutations(len(writes), func(order []int) {
		synctest.Test(t, func(t *testing.T) {
			s := store.New()
			for _, i := range order {
				writes[i](s)
			}
			var buf bytes.Buffer
			if err := registry.WriteJSON(&buf, s); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			defer s.Subscribe(rec)()
			synctest.Wait()
			initial := rec.take()
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
			if got := s.GetService(host); got != older {
				t.Fatalf("writes in order %v: GetService = %v, want the older entry", order, got.Key())
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

// Reserve sizes an empty store and leaves one that holds anything alone:
// either way, the store holds and answers the same.
func TestReserve(t *testing.T) {
	for _, reserveAfter := range []int{0, 1} {
		s := store.New()
		r := s
		ws := []*model.WorkloadInstance{pod("default", "a", "10.1.0.1"), pod("default", "b", "10.1.0.2")}
		for i, w := range ws {
			if i == reserveAfter {
				s.Reserve(10, 100)
			}
			s.UpsertWorkload(w)
		}
		if got := r.Workloads(); len(got) != 2 {
			t.Errorf("Reserve after %d workloads: Workloads() = %v, want both", reserveAfter, got)
		}
		for _, w := range ws {
			if got := r.WorkloadsByIP(w.Endpoint.Addresses[0]); len(got) != 1 || got[0] != w {
				t.Errorf("Reserve after %d workloads: WorkloadsByIP(%v) = %v", reserveAfter, w.Endpoint.Addresses[0], got)
			}
		}
	}
}

// UpsertWorkloads is UpsertWorkload of each workload in turn, across its
// batches: the same events in the same order, the same state.
func TestUpsertWorkloads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ws []*model.WorkloadInstance
		for i := range 1300 { // three batches
			ws = append(ws, pod("default", fmt.Sprintf("p-%04d", i), fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)))
		}
		// Within the list: an equal instance (nothing), one that moves,
		// and a second workload at an address.
		ws = append(ws, pod("default", "p-0000", "10.1.0.1"), pod("default", "p-0001", "10.9.0.1"), pod("default", "other", "10.1.0.3"))

		one, oneReader, oneRec := newStore(t)
		for _, w := range ws {
			one.UpsertWorkload(w)
		}
		batched, batchedReader, batchedRec := newStore(t)
		batched.UpsertWorkloads(ws)
		synctest.Wait()

		want, got := oneRec.take(), batchedRec.take()
		if len(want) != 1302 || !slices.Equal(got, want) {
			t.Errorf("UpsertWorkloads published %d events, UpsertWorkload %d (want 1302); equal: %t", len(got), len(want), slices.Equal(got, want))
		}
		if !slices.Equal(batchedReader.Workloads(), oneReader.Workloads()) {
			t.Error("Workloads() differ")
		}
		for _, ip := range []string{"10.1.0.1", "10.1.0.2", "10.1.0.3", "10.9.0.1", "10.1.5.50"} {
			a := netip.MustParseAddr(ip)
			if got, want := batchedReader.WorkloadsByIP(a), oneReader.WorkloadsByIP(a); !slices.Equal(got, want) {
				t.Errorf("WorkloadsByIP(%s) = %v, want %v", ip, got, want)
			}
		}
	})
}
