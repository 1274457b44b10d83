package aggregate

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	httpPort = model.Port{Name: "http", Port: 80, Protocol: model.HTTP}
	grpcPort = model.Port{Name: "grpc", Port: 90, Protocol: model.GRPC}
)

// recorder records the events a subscription receives and keeps the state
// they describe.
type recorder struct {
	mu        sync.Mutex
	events    []string
	services  map[model.ServiceKey]*model.Service
	endpoints map[model.ServiceKey]map[model.ShardKey][]*model.Endpoint
	// sawMissing is set when a service or its endpoints were deleted.
	deletes int
}

func newRecorder() *recorder {
	return &recorder{
		services:  map[model.ServiceKey]*model.Service{},
		endpoints: map[model.ServiceKey]map[model.ShardKey][]*model.Endpoint{},
	}
}

func (r *recorder) OnService(e registry.ServiceEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := e.Service().Key()
	r.events = append(r.events, "service "+e.Type.String()+" "+key.String())
	if e.Type == model.EventDelete {
		delete(r.services, key)
		r.deletes++
	} else {
		r.services[key] = e.Current
	}
}

func (r *recorder) OnEndpoints(e registry.EndpointsEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "endpoints "+e.Shard.String()+" "+e.Service.String()+" "+strconv.Itoa(len(e.Endpoints)))
	if r.endpoints[e.Service] == nil {
		r.endpoints[e.Service] = map[model.ShardKey][]*model.Endpoint{}
	}
	if len(e.Endpoints) == 0 {
		if len(r.endpoints[e.Service][e.Shard]) > 0 {
			r.deletes++
		}
		delete(r.endpoints[e.Service], e.Shard)
	} else {
		r.endpoints[e.Service][e.Shard] = e.Endpoints
	}
}

func (r *recorder) OnWorkload(e registry.WorkloadEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "workload "+e.Type.String()+" "+e.Workload().Key().String())
}

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// run starts the aggregate in the bubble and returns its stop function.
func run(t *testing.T, a *Controller) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	synctest.Wait()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func TestMergesOneServiceAcrossClusters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFake(model.Kubernetes, "cluster-a"), newFake(model.Kubernetes, "cluster-b")
		sa := a.service("reviews", "default", httpPort)
		sa = withVIP(a, sa, "10.0.0.1", "spiffe://td/ns/default/sa/a")
		sb := b.service("reviews", "default", httpPort, grpcPort)
		withVIP(b, sb, "10.1.0.1", "spiffe://td/ns/default/sa/b")
		a.endpoints(sa, "10.244.0.1")
		b.endpoints(sb, "10.245.0.1", "10.245.0.2")

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*fakeRegistry{b, a} { // order of addition must not matter
			if err := agg.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		stop := run(t, agg)
		defer stop()
		if !agg.HasSynced() {
			t.Fatal("not synced")
		}

		svcs := agg.Services()
		if len(svcs) != 1 {
			t.Fatalf("want one merged service, got %d", len(svcs))
		}
		got := svcs[0]
		if want := map[model.ClusterID][]netip.Prefix{
			"cluster-a": {netip.MustParsePrefix("10.0.0.1/32")},
			"cluster-b": {netip.MustParsePrefix("10.1.0.1/32")},
		}; !mapsEqual(got.Addresses, want) {
			t.Errorf("addresses = %v, want %v", got.Addresses, want)
		}
		if want := []string{"spiffe://td/ns/default/sa/a", "spiffe://td/ns/default/sa/b"}; !slices.Equal(got.ServiceAccounts, want) {
			t.Errorf("service accounts = %v, want %v", got.ServiceAccounts, want)
		}
		if !slices.Equal(got.Ports, []model.Port{httpPort}) {
			t.Errorf("ports = %v, want cluster-a's (first by cluster ID)", got.Ports)
		}
		diags := agg.Diagnostics()
		if len(diags) != 1 || diags[0].Cluster != "cluster-b" || !strings.Contains(diags[0].Message, "differ from cluster cluster-a") {
			t.Errorf("want one port-conflict diagnostic for cluster-b, got %v", diags)
		}
		// The merged ports rule: cluster-b's grpc endpoints serve a port
		// the merged service does not have, and are left out.
		eps := agg.Endpoints(got.Key(), registry.EndpointQuery{})
		if len(eps) != 1+2 {
			t.Errorf("endpoints = %d, want 3 (1 in a, 2 http in b)", len(eps))
		}
		if n := len(agg.Endpoints(got.Key(), registry.EndpointQuery{Cluster: "cluster-a"})); n != 1 {
			t.Errorf("cluster-a endpoints = %d, want 1", n)
		}
		if n := len(agg.Endpoints(got.Key(), registry.EndpointQuery{Cluster: "cluster-b", Port: "grpc"})); n != 0 {
			t.Errorf("cluster-b grpc endpoints = %d, want 0: no port grpc in the merged service", n)
		}

		// Once cluster-a is gone, cluster-b's ports rule, and its grpc
		// endpoints come back.
		if err := agg.Remove(model.Kubernetes, "cluster-a"); err != nil {
			t.Fatal(err)
		}
		if n := len(agg.Endpoints(got.Key(), registry.EndpointQuery{Port: "grpc"})); n != 2 {
			t.Errorf("after cluster-a's removal, grpc endpoints = %d, want 2", n)
		}
		if diags := agg.Diagnostics(); len(diags) != 0 {
			t.Errorf("diagnostics after cluster-a's removal: %v", diags)
		}
	})
}

func withVIP(f *fakeRegistry, svc *model.Service, vip, sa string) *model.Service {
	n := svc.DeepCopy()
	n.Addresses = map[model.ClusterID][]netip.Prefix{f.shard.Cluster: {netip.MustParsePrefix(vip + "/32")}}
	n.ServiceAccounts = []string{sa}
	f.st.UpsertService(n)
	return n
}

func mapsEqual(a, b map[model.ClusterID][]netip.Prefix) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestKubernetesServiceShadowsServiceEntryEverywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube, se := newFake(model.Kubernetes, "c1"), newFake(model.External, "c1")
		ks := kube.service("reviews", "default", httpPort)
		kube.endpoints(ks, "10.0.0.1")
		entry := &model.Service{Hostname: ks.Hostname, Namespace: "default", Name: "reviews-se", Provider: model.External, Ports: []model.Port{httpPort}}
		se.st.UpsertService(entry)
		se.endpoints(entry, "192.168.0.1", "192.168.0.2")
		// The same host in another namespace stays its own service.
		other := &model.Service{Hostname: ks.Hostname, Namespace: "other", Name: "reviews-se", Provider: model.External, Ports: []model.Port{httpPort}}
		se.st.UpsertService(other)

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		defer agg.Subscribe(rec)()
		_ = agg.Add(se)
		_ = agg.Add(kube)
		stop := run(t, agg)
		defer stop()

		key := ks.Key()
		if got := agg.ServiceByKey(key); got == nil || got.Provider != model.Kubernetes {
			t.Fatalf("ServiceByKey = %v, want the Kubernetes Service", got)
		}
		if got := agg.GetService(ks.Hostname); got == nil || got.Provider != model.Kubernetes {
			t.Fatalf("GetService = %v, want the Kubernetes Service", got)
		}
		eps := agg.Endpoints(key, registry.EndpointQuery{})
		if len(eps) != 1 || eps[0].Address() != "10.0.0.1" {
			t.Fatalf("endpoints = %v, want only the Kubernetes endpoint", eps)
		}
		if ts := agg.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{netip.MustParseAddr("192.168.0.1")}}); len(ts) != 0 {
			t.Errorf("shadowed entry's endpoint is a proxy target: %v", ts)
		}
		synctest.Wait()
		rec.mu.Lock()
		if got := rec.services[key]; got == nil || got.Provider != model.Kubernetes {
			t.Errorf("subscriber holds %v, want the Kubernetes Service", got)
		}
		if n := len(rec.endpoints[key][model.ShardKey{Provider: model.External, Cluster: "c1"}]); n != 0 {
			t.Errorf("subscriber holds %d ServiceEntry endpoints for the shadowed host", n)
		}
		rec.mu.Unlock()
		var shadowed bool
		for _, d := range agg.Diagnostics() {
			shadowed = shadowed || (d.Kind == "ServiceEntry" && d.Name == "reviews-se" && d.Namespace == "default")
		}
		if !shadowed {
			t.Errorf("no diagnostic for the shadowed ServiceEntry: %v", agg.Diagnostics())
		}

		// The Kubernetes Service goes: the entry takes the host back, with
		// its endpoints.
		kube.st.DeleteService(key)
		synctest.Wait()
		if got := agg.ServiceByKey(key); got == nil || got.Provider != model.External {
			t.Fatalf("after the Service's delete, ServiceByKey = %v, want the ServiceEntry", got)
		}
		if n := len(agg.Endpoints(key, registry.EndpointQuery{})); n != 2 {
			t.Errorf("after the Service's delete, %d endpoints, want the entry's 2", n)
		}
	})
}

func TestRemoveDeletesAndDetaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFake(model.Kubernetes, "a"), newFake(model.Kubernetes, "b")
		sa := a.service("only-a", "ns", httpPort)
		a.endpoints(sa, "10.0.0.1")
		a.workload(model.KindPod, "pod-a", "ns", "10.0.0.1", "")
		b.service("only-b", "ns", httpPort)

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(a)
		_ = agg.Add(b)
		stop := run(t, agg)
		defer stop()
		rec := newRecorder()
		defer agg.Subscribe(rec)()
		synctest.Wait()

		if err := agg.Remove(model.Kubernetes, "a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if a.running.Load() {
			t.Error("removed registry still running")
		}
		if n := a.subscribers.Load(); n != 0 {
			t.Errorf("removed registry still has %d subscribers", n)
		}
		if got := agg.ServiceByKey(sa.Key()); got != nil {
			t.Errorf("removed registry's service still served: %v", got)
		}
		if len(agg.Workloads()) != 0 {
			t.Errorf("removed registry's workloads still served: %v", agg.Workloads())
		}
		log := rec.log()
		want := []string{
			"endpoints Kubernetes/a ns/only-a.ns.svc.cluster.local 0",
			"service delete ns/only-a.ns.svc.cluster.local",
			"workload delete a/Pod/ns/pod-a",
		}
		if !containsInOrder(log, want) {
			t.Errorf("events %q do not contain, in order, %q", log, want)
		}
		// Events of the removed registry no longer reach the aggregate.
		a.service("late", "ns", httpPort)
		synctest.Wait()
		if len(agg.Services()) != 1 {
			t.Errorf("services = %v, want only-b", agg.Services())
		}
		if err := agg.Remove(model.Kubernetes, "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second Remove: %v, want ErrNotFound", err)
		}
	})
}

func containsInOrder(log, want []string) bool {
	i := 0
	for _, l := range log {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestReplaceKeepsEndpointsUntilTheNewRegistrySyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := newFake(model.Kubernetes, "c")
		s := old.service("reviews", "ns", httpPort)
		old.endpoints(s, "10.0.0.1")
		stale := old.service("stale", "ns", httpPort)
		old.endpoints(stale, "10.0.0.9")

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(old)
		stop := run(t, agg)
		defer stop()
		rec := newRecorder()
		defer agg.Subscribe(rec)()
		synctest.Wait()

		repl := newFake(model.Kubernetes, "c")
		repl.holdSync = true
		if err := agg.Replace(repl); err != nil {
			t.Fatal(err)
		}
		if err := agg.Replace(repl); !errors.Is(err, ErrDuplicate) {
			t.Errorf("replacing the pending registry with itself = %v, want ErrDuplicate", err)
		}
		if err := agg.Replace(old); !errors.Is(err, ErrDuplicate) {
			t.Errorf("replacing with the registry in place = %v, want ErrDuplicate", err)
		}
		if err := agg.Replace(nil); !errors.Is(err, ErrNilRegistry) {
			t.Errorf("Replace(nil) = %v, want ErrNilRegistry", err)
		}
		if err := agg.Add(nil); !errors.Is(err, ErrNilRegistry) {
			t.Errorf("Add(nil) = %v, want ErrNilRegistry", err)
		}
		synctest.Wait()
		// Not synced yet: the old registry's state is still served.
		if n := len(agg.Endpoints(s.Key(), registry.EndpointQuery{})); n != 1 {
			t.Fatalf("during replacement, %d endpoints, want 1", n)
		}
		if !old.running.Load() {
			t.Fatal("old registry stopped before its replacement synced")
		}
		// The new registry lists its state, then syncs.
		s2 := repl.service("reviews", "ns", httpPort)
		repl.endpoints(s2, "10.0.0.1", "10.0.0.2")
		repl.st.MarkSynced() // its SyncedEvent promotes it: no time passes
		synctest.Wait()

		if old.running.Load() {
			t.Error("old registry still running after its replacement synced")
		}
		if n := len(agg.Endpoints(s.Key(), registry.EndpointQuery{})); n != 2 {
			t.Errorf("after replacement, %d endpoints, want the new registry's 2", n)
		}
		if agg.ServiceByKey(stale.Key()) != nil {
			t.Error("service only the old registry knew survived the replacement")
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, e := range rec.events {
			if strings.Contains(e, "reviews") && (strings.HasSuffix(e, " 0") || strings.Contains(e, "delete")) {
				t.Errorf("reviews went missing during the replacement: %q", e)
			}
		}
		if rec.services[stale.Key()] != nil {
			t.Error("subscriber did not see the stale service's delete")
		}
	})
}

func TestSubscribeClusterReceivesOnlyThatCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFake(model.Kubernetes, "a"), newFake(model.Kubernetes, "b")
		sa := a.service("shared", "ns", httpPort)
		a.endpoints(sa, "10.0.0.1")
		sb := b.service("shared", "ns", httpPort)
		b.endpoints(sb, "10.1.0.1")
		b.service("only-b", "ns", httpPort)

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(a)
		_ = agg.Add(b)
		stop := run(t, agg)
		defer stop()
		recA := newRecorder()
		defer agg.SubscribeCluster("a", recA)()
		synctest.Wait()
		b.endpoints(sb, "10.1.0.1", "10.1.0.2")
		b.service("later-b", "ns", httpPort)
		synctest.Wait()

		for _, e := range recA.log() {
			if strings.Contains(e, "Kubernetes/b") || strings.Contains(e, "only-b") || strings.Contains(e, "later-b") {
				t.Errorf("cluster a's subscriber received %q", e)
			}
		}
		recA.mu.Lock()
		got := len(recA.endpoints[sa.Key()][model.ShardKey{Provider: model.Kubernetes, Cluster: "a"}])
		recA.mu.Unlock()
		if got != 1 {
			t.Errorf("cluster a's subscriber holds %d endpoints of a, want 1", got)
		}

		// A registry for cluster a added later reaches the scoped
		// subscriber; removing it deletes what it brought.
		se := newFake(model.External, "a")
		se.st.UpsertService(&model.Service{Hostname: "db.example.com", Namespace: "ns", Name: "db", Provider: model.External})
		_ = agg.Add(se)
		synctest.Wait()
		recA.mu.Lock()
		if recA.services[model.ServiceKey{Namespace: "ns", Hostname: "db.example.com"}] == nil {
			t.Error("scoped subscriber did not receive the added registry's service")
		}
		recA.mu.Unlock()
		_ = agg.Remove(model.External, "a")
		synctest.Wait()
		recA.mu.Lock()
		if recA.services[model.ServiceKey{Namespace: "ns", Hostname: "db.example.com"}] != nil {
			t.Error("scoped subscriber did not see the removed registry's service deleted")
		}
		recA.mu.Unlock()
	})
}

func TestWorkloadsCrossBetweenRegistries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kubeA := sinkRegistry{newFake(model.Kubernetes, "a")}
		kubeB := sinkRegistry{newFake(model.Kubernetes, "b")}
		se := sinkRegistry{newFake(model.External, "a")}

		kubeA.workload(model.KindPod, "pod-a", "ns", "10.0.0.1", "net-a")
		se.workload(model.KindWorkloadEntry, "vm-same-net", "ns", "192.168.0.1", "net-a")
		se.workload(model.KindWorkloadEntry, "vm-no-net", "ns", "192.168.0.2", "")

		// A policy: workloads on a network stay in their own cluster.
		agg, err := New(Options{ShareWorkload: func(w *model.WorkloadInstance, to model.ShardKey) bool {
			return w.Endpoint.Network == "" || w.Endpoint.Cluster == to.Cluster
		}})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(kubeA)
		_ = agg.Add(se)
		stop := run(t, agg)
		defer stop()
		_ = agg.Add(kubeB) // a sink added later gets what is known
		synctest.Wait()

		check := func(s sinkRegistry, want ...string) {
			t.Helper()
			got := s.held()
			wantSet := map[string]bool{}
			for _, w := range want {
				wantSet[w] = true
			}
			if len(got) != len(wantSet) {
				t.Errorf("%s holds %v, want %v", s.shard, got, want)
				return
			}
			for w := range wantSet {
				if !got[w] {
					t.Errorf("%s holds %v, want %v", s.shard, got, want)
				}
			}
		}
		check(kubeA, "a/WorkloadEntry/ns/vm-same-net", "a/WorkloadEntry/ns/vm-no-net")
		// The policy keeps the net-a Pod and WorkloadEntry from cluster b;
		// the one on no particular network is shared.
		check(kubeB, "a/WorkloadEntry/ns/vm-no-net")

		// Removing the ServiceEntry registry withdraws its workloads.
		_ = agg.Remove(model.External, "a")
		synctest.Wait()
		check(kubeA)
		check(kubeB)
	})
}

func TestSyncTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := newFake(model.Kubernetes, "slow")
		slow.holdSync = true
		agg, err := New(Options{SyncTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(slow)
		stop := run(t, agg)
		defer stop()
		if agg.HasSynced() {
			t.Fatal("synced before the slow registry or the timeout")
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if !agg.HasSynced() {
			t.Fatal("not synced after the sync timeout")
		}
		ds := agg.Diagnostics()
		if len(ds) != 1 || ds[0].Cluster != "slow" || !strings.Contains(ds[0].Message, "did not sync within 30s") {
			t.Errorf("diagnostics = %v, want one for the slow cluster", ds)
		}
	})
}

func TestAddDuplicateAndRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := agg.Add(newFake(model.Kubernetes, "c")); err != nil {
			t.Fatal(err)
		}
		if err := agg.Add(newFake(model.Kubernetes, "c")); !errors.Is(err, ErrDuplicate) {
			t.Errorf("duplicate Add: %v, want ErrDuplicate", err)
		}
		stop := run(t, agg)
		if err := agg.Run(t.Context()); err == nil {
			t.Error("second Run returned nil")
		}
		stop()
	})
}

func TestDumpIsDeterministicAcrossAdditionOrders(t *testing.T) {
	build := func(order []int) []byte {
		var out bytes.Buffer
		synctest.Test(t, func(t *testing.T) {
			regs := []*fakeRegistry{newFake(model.Kubernetes, "a"), newFake(model.Kubernetes, "b"), newFake(model.External, "a")}
			for i, r := range regs[:2] {
				s := r.service("reviews", "ns", httpPort)
				s = withVIP(r, s, "10.0.0."+string(rune('1'+i)), "sa")
				r.endpoints(s, "10.1.0."+string(rune('1'+i)))
			}
			e := &model.Service{Hostname: "reviews.ns.svc.cluster.local", Namespace: "ns", Name: "se", Provider: model.External, Ports: []model.Port{httpPort}}
			regs[2].st.UpsertService(e)
			regs[2].endpoints(e, "192.168.0.1")
			agg, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range order {
				_ = agg.Add(regs[i])
			}
			stop := run(t, agg)
			defer stop()
			if err := registry.WriteJSON(&out, agg); err != nil {
				t.Fatal(err)
			}
		})
		return out.Bytes()
	}
	first := build([]int{0, 1, 2})
	for _, order := range [][]int{{2, 1, 0}, {1, 2, 0}} {
		if got := build(order); !bytes.Equal(got, first) {
			t.Errorf("order %v: dump differs:\n%s\nvs\n%s", order, got, first)
		}
	}
}

// settlingSink is a sink that applies handed workloads only when told,
// like a registry with a worker of its own.
type settlingSink struct {
	sinkRegistry
	applied chan struct{}
}

func (s settlingSink) Settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.applied:
		return true
	default:
		return len(s.handed) == 0
	}
}

// HasSynced waits until the workloads handed between registries have been
// applied by their receivers.
func TestHasSyncedWaitsForHandedWorkloads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kube := newFake(model.Kubernetes, "c")
		kube.workload(model.KindPod, "pod", "ns", "10.0.0.1", "")
		se := settlingSink{sinkRegistry{newFake(model.External, "c")}, make(chan struct{})}

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(kube)
		_ = agg.Add(se)
		stop := run(t, agg)
		defer stop()
		if !se.held()["c/Pod/ns/pod"] {
			t.Fatal("the pod was not handed to the sink")
		}
		if agg.HasSynced() {
			t.Fatal("synced while the sink had not applied the pod it was handed")
		}
		close(se.applied)
		if !agg.HasSynced() {
			t.Fatal("not synced once the sink settled")
		}
	})
}

// By default every workload is handed to every other registry that
// selects workloads.
func TestWorkloadsSharedByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kubeA := sinkRegistry{newFake(model.Kubernetes, "a")}
		kubeB := sinkRegistry{newFake(model.Kubernetes, "b")}
		kubeA.workload(model.KindPod, "pod-a", "ns", "10.0.0.1", "net-a")
		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(kubeA)
		_ = agg.Add(kubeB)
		stop := run(t, agg)
		defer stop()
		if got := kubeB.held(); len(got) != 1 || !got["a/Pod/ns/pod-a"] {
			t.Errorf("cluster b holds %v, want pod-a", got)
		}
		if got := kubeA.held(); len(got) != 0 {
			t.Errorf("cluster a was handed its own workloads: %v", got)
		}
	})
}
