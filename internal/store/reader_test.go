package store_test

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"unsafe"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestProxyTargets(t *testing.T) {
	s := store.New()
	r := s
	reviews, ratings, other := kubeService("default", "reviews"), kubeService("default", "ratings"), kubeService("prod", "reviews")
	reviews.Ports = append(reviews.Ports, model.Port{Name: "grpc", Port: 9090, Protocol: model.GRPC})
	for _, svc := range []*model.Service{reviews, ratings, other} {
		s.UpsertService(svc)
	}
	grpc := endpoint("10.1.0.1", 7070)
	grpc.ServicePortName = "grpc"
	s.SetEndpoints(kubeShard, reviews.Key(), []*model.Endpoint{endpoint("10.1.0.1", 8080), grpc, endpoint("10.1.0.2", 8080)})
	s.SetEndpoints(kubeShard, ratings.Key(), []*model.Endpoint{endpoint("10.1.0.1", 8081)})
	s.SetEndpoints(kubeShard, other.Key(), []*model.Endpoint{endpoint("10.1.0.1", 8082)})
	// An endpoint for a port the service does not have yields nothing.
	stray := endpoint("10.1.0.9", 1)
	stray.ServicePortName = "missing"
	s.SetEndpoints(kubeShard, kubeService("default", "details").Key(), []*model.Endpoint{stray})
	s.UpsertService(kubeService("default", "details"))

	ip := netip.MustParseAddr
	render := func(ts []model.ServiceTarget) []string {
		var out []string
		for _, t := range ts {
			out = append(out, fmt.Sprintf("%s:%d->%d", t.Service.Key(), t.Port.Port, t.TargetPort))
		}
		return out
	}
	tests := []struct {
		name string
		q    registry.ProxyQuery
		want []string
	}{
		{"every namespace, sorted by hostname, namespace, port", registry.ProxyQuery{IPs: []netip.Addr{ip("10.1.0.1")}}, []string{
			"default/ratings.default.svc.cluster.local:9080->8081",
			"default/reviews.default.svc.cluster.local:9080->8080",
			"default/reviews.default.svc.cluster.local:9090->7070",
			"prod/reviews.prod.svc.cluster.local:9080->8082",
		}},
		{"namespace filter", registry.ProxyQuery{Namespace: "prod", IPs: []netip.Addr{ip("10.1.0.1")}}, []string{
			"prod/reviews.prod.svc.cluster.local:9080->8082",
		}},
		{"several IPs, duplicates dropped", registry.ProxyQuery{Namespace: "default", IPs: []netip.Addr{ip("10.1.0.2"), ip("10.1.0.1"), ip("10.1.0.2")}}, []string{
			"default/ratings.default.svc.cluster.local:9080->8081",
			"default/reviews.default.svc.cluster.local:9080->8080",
			"default/reviews.default.svc.cluster.local:9090->7070",
		}},
		{"unknown IP", registry.ProxyQuery{IPs: []netip.Addr{ip("10.9.9.9")}}, nil},
		{"filtered out", registry.ProxyQuery{Namespace: "kube-system", IPs: []netip.Addr{ip("10.1.0.1")}}, nil},
		{"unknown service port", registry.ProxyQuery{IPs: []netip.Addr{ip("10.1.0.9")}}, nil},
		{"no IPs", registry.ProxyQuery{}, nil},
	}
	for _, tt := range tests {
		if got := render(r.ProxyTargets(tt.q)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ProxyTargets(%+v) =\n  %q\nwant\n  %q", tt.name, tt.q, got, tt.want)
		}
	}

	// Asking about a workload that backs nothing is the common case on a
	// hot path: it must not allocate.
	unknown, known := ip("10.9.9.9"), ip("10.1.0.1")
	for name, f := range map[string]func(){
		"unknown IP":            func() { r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{unknown}}) },
		"filtered by namespace": func() { r.ProxyTargets(registry.ProxyQuery{Namespace: "kube-system", IPs: []netip.Addr{known}}) },
	} {
		if allocs := testing.AllocsPerRun(100, f); allocs != 0 {
			t.Errorf("ProxyTargets with nothing found (%s) allocates %v times, want 0", name, allocs)
		}
	}
}

// GetService answers, among the entries that declare a hostname in
// different namespaces, the one that wins model.ComparePrecedence (the
// oldest, then by namespace), and the next once it is deleted.
func TestGetServicePrecedence(t *testing.T) {
	const host = "reviews.example.com"
	s := store.New()
	young, old, sameAge := serviceEntry("a", "young", host, 2), serviceEntry("z", "old", host, 1), serviceEntry("b", "old", host, 1)
	for _, svc := range []*model.Service{young, old, sameAge} {
		s.UpsertService(svc)
	}
	for _, step := range []struct {
		remove model.ServiceKey
		want   *model.Service
	}{{model.ServiceKey{}, sameAge}, {sameAge.Key(), old}, {old.Key(), young}, {young.Key(), nil}} {
		s.DeleteService(step.remove)
		if got := s.GetService(host); got != step.want {
			t.Errorf("after deleting %q: GetService = %v, want %v", step.remove, got, step.want)
		}
	}
	if got := s.GetService("absent.example.com"); got != nil {
		t.Errorf("GetService of an unknown host = %v", got)
	}
}

// HasSynced is true only once the state marked synced has reached every
// handler.
func TestHasSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		r := s
		if r.HasSynced() {
			t.Fatal("HasSynced before MarkSynced")
		}
		release := make(chan struct{})
		defer r.Subscribe(registry.HandlerFuncs{ServiceFunc: func(registry.ServiceEvent) { <-release }})()
		s.UpsertService(kubeService("default", "reviews"))
		s.MarkSynced()
		synctest.Wait() // the handler is blocked in the add event
		if r.HasSynced() {
			t.Fatal("HasSynced while the handler has not returned from the initial state")
		}
		close(release)
		synctest.Wait()
		if !r.HasSynced() {
			t.Fatal("not HasSynced once the handler has the initial state")
		}
		// Later changes do not take it back.
		s.UpsertService(kubeService("default", "ratings"))
		if !r.HasSynced() {
			t.Error("HasSynced turned false after a later change")
		}
	})
}

func TestHasSyncedWithoutSubscribers(t *testing.T) {
	s := store.New()
	s.UpsertService(kubeService("default", "reviews"))
	s.MarkSynced()
	if !s.HasSynced() {
		t.Error("HasSynced is false with nobody to deliver to")
	}
}

// The sorted views are built once and shared until something changes.
func TestViewsCached(t *testing.T) {
	s := store.New()
	r := s
	s.UpsertService(kubeService("default", "reviews"))
	s.UpsertWorkload(pod("default", "reviews-1", "10.1.0.1"))
	s.SetDiagnostics("a", []model.Diagnostic{{Severity: model.Error, Kind: "Service", Name: "x"}})

	same := func(a, b any) bool {
		switch a := a.(type) {
		case []*model.Service:
			return unsafe.SliceData(a) == unsafe.SliceData(b.([]*model.Service))
		case []*model.WorkloadInstance:
			return unsafe.SliceData(a) == unsafe.SliceData(b.([]*model.WorkloadInstance))
		case []model.Diagnostic:
			return unsafe.SliceData(a) == unsafe.SliceData(b.([]model.Diagnostic))
		}
		panic("unexpected type")
	}
	views := []struct {
		name   string
		get    func() any
		change func()
		noop   func()
	}{
		{"Services", func() any { return r.Services() },
			func() { s.UpsertService(kubeService("default", "ratings")) },
			func() { s.UpsertService(kubeService("default", "ratings")) }},
		{"Workloads", func() any { return r.Workloads() },
			func() { s.UpsertWorkload(pod("default", "reviews-2", "10.1.0.2")) },
			func() { s.UpsertWorkload(pod("default", "reviews-2", "10.1.0.2")) }},
		{"Diagnostics", func() any { return r.Diagnostics() },
			func() {
				s.SetDiagnostics("b", []model.Diagnostic{{Severity: model.Warning, Kind: "Service", Name: "y"}})
			},
			func() {
				s.SetDiagnostics("b", []model.Diagnostic{{Severity: model.Warning, Kind: "Service", Name: "y"}})
			}},
	}
	for _, v := range views {
		first := v.get()
		if !same(first, v.get()) {
			t.Errorf("%s() twice without a change returned two slices", v.name)
		}
		v.change()
		changed := v.get()
		if same(first, changed) {
			t.Errorf("%s() after a change returned the old slice", v.name)
		}
		v.noop()
		if !same(changed, v.get()) {
			t.Errorf("%s(): a write that changed nothing dropped the cached view", v.name)
		}
	}
	for name, f := range map[string]func(){
		"Services":    func() { _ = r.Services() },
		"Workloads":   func() { _ = r.Workloads() },
		"Diagnostics": func() { _ = r.Diagnostics() },
	} {
		if allocs := testing.AllocsPerRun(10, f); allocs != 0 {
			t.Errorf("cached %s() allocates %v times", name, allocs)
		}
	}
	if got := len(r.Services()); got != 2 {
		t.Errorf("len(Services()) = %d, want 2", got)
	}
}

func TestEmptyStoreAnswers(t *testing.T) {
	r := store.New()
	if got := r.Services(); got == nil || len(got) != 0 {
		t.Errorf("Services() of an empty store = %#v, want empty", got)
	}
	if got := r.Diagnostics(); got == nil || len(got) != 0 {
		t.Errorf("Diagnostics() of an empty store = %#v, want empty, not nil", got)
	}
	if got := r.Endpoints(model.ServiceKey{Namespace: "default", Hostname: "x"}, registry.EndpointQuery{}); got != nil {
		t.Errorf("Endpoints of an unknown service = %v", got)
	}
}

func TestEndpointsQuery(t *testing.T) {
	s := store.New()
	svc := kubeService("default", "reviews")
	svc.Ports = append(svc.Ports, model.Port{Name: "grpc", Port: 9090, Protocol: model.GRPC})
	s.UpsertService(svc)
	grpc := endpoint("10.1.0.1", 9090)
	grpc.ServicePortName = "grpc"
	s.SetEndpoints(kubeShard, svc.Key(), []*model.Endpoint{endpoint("10.1.0.2", 9080), grpc, endpoint("10.1.0.1", 9080)})
	r := s
	keys := func(eps []*model.Endpoint) []string {
		var out []string
		for _, ep := range eps {
			out = append(out, ep.Key().String())
		}
		return out
	}
	tests := []struct {
		q    registry.EndpointQuery
		want []string
	}{
		{registry.EndpointQuery{}, []string{"grpc/10.1.0.1:9090", "http/10.1.0.1:9080", "http/10.1.0.2:9080"}},
		{registry.EndpointQuery{Port: "http"}, []string{"http/10.1.0.1:9080", "http/10.1.0.2:9080"}},
		{registry.EndpointQuery{Cluster: "c1", Port: "grpc"}, []string{"grpc/10.1.0.1:9090"}},
		{registry.EndpointQuery{Cluster: "c2"}, nil},
	}
	for _, tt := range tests {
		if got := keys(r.Endpoints(svc.Key(), tt.q)); !slices.Equal(got, tt.want) {
			t.Errorf("Endpoints(%+v) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestDiagnostics(t *testing.T) {
	s := store.New()
	r := s
	d := func(name string) model.Diagnostic {
		return model.Diagnostic{Severity: model.Error, Kind: "ServiceEntry", Namespace: "ns", Name: name, Message: "bad"}
	}
	s.SetDiagnostics("ServiceEntry/ns/b", []model.Diagnostic{d("b")})
	s.SetDiagnostics("ServiceEntry/ns/a", []model.Diagnostic{d("a")})
	names := func() []string {
		var out []string
		for _, dg := range r.Diagnostics() {
			out = append(out, dg.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Diagnostics() = %v, want a, b (sorted across owners)", got)
	}
	s.SetDiagnostics("ServiceEntry/ns/b", nil)
	if got := names(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after clearing owner b: Diagnostics() = %v, want a", got)
	}
	// The store keeps its own copy of the list.
	list := []model.Diagnostic{d("c")}
	s.SetDiagnostics("ServiceEntry/ns/c", list)
	list[0].Name = "changed"
	if got := names(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("the caller's later change reached the store: %v", got)
	}
}

// A SyncHandler hears that the store synced once, in order: an early
// subscriber after the events before MarkSynced, a late one at the end
// of its initial events.
func TestSyncedEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		record := func(log *[]string) registry.HandlerFuncs {
			var mu sync.Mutex
			add := func(line string) { mu.Lock(); *log = append(*log, line); mu.Unlock() }
			return registry.HandlerFuncs{
				ServiceFunc: func(e registry.ServiceEvent) { add("service " + e.Service().Name) },
				SyncedFunc:  func(e registry.SyncedEvent) { add(fmt.Sprintf("synced initial=%t", e.Initial)) },
			}
		}
		var early, late []string
		defer s.Subscribe(record(&early))()
		s.UpsertService(kubeService("default", "reviews"))
		s.MarkSynced()
		s.MarkSynced() // once only
		s.UpsertService(kubeService("default", "ratings"))
		synctest.Wait()
		defer s.Subscribe(record(&late))()
		synctest.Wait()
		if want := []string{"service reviews", "synced initial=false", "service ratings"}; !slices.Equal(early, want) {
			t.Errorf("early subscriber got %q, want %q", early, want)
		}
		if want := []string{"service ratings", "service reviews", "synced initial=true"}; !slices.Equal(late, want) {
			t.Errorf("late subscriber got %q, want %q", late, want)
		}
	})
}
