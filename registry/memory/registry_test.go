package memory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// recorder writes each event it receives as a line of text.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *recorder) OnService(e registry.ServiceEvent) {
	r.add(fmt.Sprintf("%s service %s", e.Type, e.Service().Hostname))
}

func (r *recorder) OnEndpoints(e registry.EndpointsEvent) {
	var eps []string
	for _, ep := range e.Endpoints {
		eps = append(eps, ep.Key().String()+"@"+string(ep.Cluster))
	}
	r.add(fmt.Sprintf("endpoints %s %s [%s]", e.Shard, e.Service.Hostname, strings.Join(eps, " ")))
}

func (r *recorder) OnWorkload(e registry.WorkloadEvent) {
	r.add(fmt.Sprintf("%s workload %s", e.Type, e.Workload().Key()))
}

// expect checks the events recorded since the last call (after
// synctest.Wait) and forgets them.
func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	r.mu.Lock()
	got := r.events
	r.events = nil
	r.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const reviewsHost = "reviews.default.svc.cluster.local"

func TestRegistryEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg, err := memory.New(memory.Options{ClusterID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		defer reg.Subscribe(rec)()

		reviews := memory.Service("reviews", "default").Port("http", 9080).Build()
		// Endpoints first: held until the service comes.
		reg.SetEndpoints(reviews.Key(), memory.Endpoint("10.1.0.1", 9080).Port("http").Build())
		synctest.Wait()
		rec.expect(t)

		reg.AddService(reviews)
		reg.AddService(memory.Service("reviews", "default").Port("http", 9080).Build()) // equal: nothing
		synctest.Wait()
		rec.expect(t,
			"add service "+reviewsHost,
			"endpoints Kubernetes/c1 "+reviewsHost+" [http/10.1.0.1:9080@c1]")

		if err := reg.UpdateService(reviews.Key(), func(s *model.Service) {
			s.Ports = append(s.Ports, model.Port{Name: "grpc", Port: 9090, Protocol: model.GRPC})
		}); err != nil {
			t.Fatal(err)
		}
		reg.SetEndpoints(reviews.Key(),
			memory.Endpoint("10.1.0.2", 9080).Port("http").Build(),
			memory.Endpoint("10.1.0.1", 9080).Port("http").Build())
		synctest.Wait()
		rec.expect(t,
			"update service "+reviewsHost,
			"endpoints Kubernetes/c1 "+reviewsHost+" [http/10.1.0.1:9080@c1 http/10.1.0.2:9080@c1]")

		reg.AddWorkload(memory.Workload("reviews-1", "default").Address("10.1.0.1").Build())
		reg.DeleteWorkload(model.WorkloadKey{Kind: model.KindPod, Namespace: "default", Name: "reviews-1"})
		reg.DeleteService(reviews.Key())
		synctest.Wait()
		rec.expect(t,
			"add workload c1/Pod/default/reviews-1",
			"delete workload c1/Pod/default/reviews-1",
			"endpoints Kubernetes/c1 "+reviewsHost+" []",
			"delete service "+reviewsHost)
	})
}

// A late subscriber first receives the state, as from a real registry.
func TestRegistryLateSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg, err := memory.New(memory.Options{Provider: model.External, ClusterID: "c2"})
		if err != nil {
			t.Fatal(err)
		}
		se := memory.ServiceEntry("api.example.com", "egress").Port("https", 443).Build()
		reg.AddService(se)
		reg.SetEndpoints(se.Key(), memory.Endpoint("api.example.com", 443).Port("https").Build())
		reg.AddWorkload(memory.Workload("vm-1", "egress").WorkloadEntry().Address("10.9.0.1").Build())
		rec := &recorder{}
		defer reg.Subscribe(rec)()
		synctest.Wait()
		rec.expect(t,
			"add service api.example.com",
			"endpoints External/c2 api.example.com [https/api.example.com:443@c2]",
			"add workload c2/WorkloadEntry/egress/vm-1")
	})
}

// The registry fills in what builders leave out, and keeps its own copies.
func TestRegistryAdoptsValues(t *testing.T) {
	reg, err := memory.New(memory.Options{Provider: model.External, ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Provider() != model.External || reg.Cluster() != "c1" {
		t.Fatalf("Provider, Cluster = %s, %s", reg.Provider(), reg.Cluster())
	}
	svc := memory.Service("reviews", "default").Port("http", 9080).VIP("10.96.0.10").
		Cluster("c9").VIP("10.99.0.10").Build()
	reg.AddService(svc)
	got := reg.ServiceByKey(svc.Key())
	if got == svc {
		t.Fatal("the registry stores the caller's value, not a copy")
	}
	if got.Provider != model.External {
		t.Errorf("stored provider %s, want the registry's", got.Provider)
	}
	wantVIPs := map[model.ClusterID][]netip.Prefix{
		"c1": {netip.MustParsePrefix("10.96.0.10/32")},
		"c9": {netip.MustParsePrefix("10.99.0.10/32")},
	}
	if !(&model.Service{Addresses: got.Addresses}).Equals(&model.Service{Addresses: wantVIPs}) {
		t.Errorf("stored VIPs %v, want %v", got.Addresses, wantVIPs)
	}
	if svc.Provider != model.Kubernetes || len(svc.Addresses[""]) != 1 {
		t.Error("adding a service changed the caller's value")
	}

	ep := memory.Endpoint("10.1.0.1", 9080).Port("http").Build()
	other := memory.Endpoint("10.1.0.2", 9080).Port("http").Cluster("c7").Build()
	reg.SetEndpoints(svc.Key(), ep, other)
	eps := reg.Endpoints(svc.Key(), registry.EndpointQuery{})
	if len(eps) != 2 || eps[0].Cluster != "c1" || eps[1].Cluster != "c7" || ep.Cluster != "" {
		t.Errorf("stored endpoints %v; the caller's endpoint has cluster %q", eps, ep.Cluster)
	}
	w := memory.Workload("vm-1", "default").Address("10.1.0.1").Build()
	reg.AddWorkload(w)
	if ws := reg.WorkloadsByIP(netip.MustParseAddr("10.1.0.1")); len(ws) != 1 || ws[0].Endpoint.Cluster != "c1" || w.Endpoint.Cluster != "" {
		t.Errorf("stored workloads %v", ws)
	}
	if targets := reg.ProxyTargets(registry.ProxyQuery{Namespace: "default", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}); len(targets) != 1 || targets[0].Port.Port != 9080 {
		t.Errorf("ProxyTargets = %v", targets)
	}
}

func TestRegistryDefaults(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Provider() != model.Kubernetes || reg.Cluster() != memory.DefaultClusterID {
		t.Errorf("zero Options: Provider, Cluster = %s, %s", reg.Provider(), reg.Cluster())
	}
	if got := reg.String(); got != "memory registry Kubernetes/cluster-1" {
		t.Errorf("String() = %q", got)
	}
}

func TestUpdateServiceErrors(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := model.ServiceKey{Namespace: "default", Hostname: reviewsHost}
	err = reg.UpdateService(key, func(*model.Service) { t.Error("change called for an absent service") })
	if !errors.Is(err, memory.ErrNotFound) || !strings.Contains(err.Error(), key.String()) {
		t.Errorf("UpdateService of an absent service: %v, want ErrNotFound naming %s", err, key)
	}
	reg.AddService(memory.Service("reviews", "default").Build())
	err = reg.UpdateService(key, func(s *model.Service) { s.Namespace = "prod" })
	if err == nil || !strings.Contains(err.Error(), key.String()) {
		t.Errorf("UpdateService changing the key: %v, want an error naming %s", err, key)
	}
	if reg.ServiceByKey(model.ServiceKey{Namespace: "prod", Hostname: reviewsHost}) != nil {
		t.Error("a refused update was stored")
	}
}

func TestRegistryDiagnostics(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Diagnostics(); len(got) != 0 {
		t.Fatalf("new registry has diagnostics %v", got)
	}
	b := model.Diagnostic{Severity: model.Error, Kind: "ServiceEntry", Namespace: "ns", Name: "b", Message: "no hosts"}
	a := model.Diagnostic{Severity: model.Warning, Kind: "ServiceEntry", Namespace: "ns", Name: "a", Message: "shadowed"}
	reg.AddDiagnostic(b)
	reg.AddDiagnostic(a)
	if got := reg.Diagnostics(); !slices.Equal(got, []model.Diagnostic{a, b}) {
		t.Errorf("Diagnostics() = %v, want a then b", got)
	}
	reg.ClearDiagnostics()
	if got := reg.Diagnostics(); len(got) != 0 {
		t.Errorf("after ClearDiagnostics: %v", got)
	}
}

func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg, err := memory.New(memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		reg.AddService(memory.Service("reviews", "default").Build())
		release := make(chan struct{})
		defer reg.Subscribe(registry.HandlerFuncs{ServiceFunc: func(registry.ServiceEvent) { <-release }})()
		if reg.HasSynced() {
			t.Fatal("HasSynced before Run")
		}

		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- reg.Run(ctx) }()
		synctest.Wait()
		if reg.HasSynced() {
			t.Fatal("HasSynced while the handler has not received the initial state")
		}
		close(release)
		synctest.Wait()
		if !reg.HasSynced() {
			t.Fatal("not HasSynced once Run started and the handler has the state")
		}

		err = reg.Run(ctx)
		if !errors.Is(err, registry.ErrAlreadyRunning) || !strings.Contains(err.Error(), "Kubernetes/cluster-1") {
			t.Errorf("second Run = %v, want ErrAlreadyRunning naming the registry", err)
		}
		select {
		case err := <-runErr:
			t.Fatalf("Run returned %v before its context was done", err)
		default:
		}
		cancel()
		if err := <-runErr; err != nil {
			t.Errorf("Run = %v after cancel, want nil", err)
		}
	})
}

// Two dumps of the same registry are byte-for-byte identical.
func TestDumpDeterministic(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		name := fmt.Sprintf("svc-%02d", (i*7)%20)
		svc := memory.Service(name, "default").Port("http", 80).VIP(fmt.Sprintf("10.96.0.%d", i)).
			Labels(map[string]string{"a": "1", "b": "2", "c": "3"}).Build()
		reg.AddService(svc)
		reg.SetEndpoints(svc.Key(),
			memory.Endpoint(fmt.Sprintf("10.1.%d.2", i), 80).Port("http").Labels(map[string]string{"x": "1", "y": "2"}).Build(),
			memory.Endpoint(fmt.Sprintf("10.1.%d.1", i), 80).Port("http").Build())
		reg.AddWorkload(memory.Workload(name+"-pod", "default").Address(fmt.Sprintf("10.1.%d.1", i)).Build())
	}
	var a, b bytes.Buffer
	if err := registry.WriteJSON(&a, reg); err != nil {
		t.Fatal(err)
	}
	if err := registry.WriteJSON(&b, reg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two dumps of the same registry differ")
	}
	if !strings.Contains(a.String(), `"hostname": "svc-00.default.svc.cluster.local"`) {
		t.Errorf("dump lacks the services:\n%s", a.String())
	}
}

// Concurrent UpdateService calls each see the others' changes.
func TestUpdateServiceConcurrent(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := memory.Service("reviews", "default").Build()
	reg.AddService(svc)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := reg.UpdateService(svc.Key(), func(s *model.Service) {
				s.Ports = append(s.Ports, model.Port{Name: fmt.Sprint("p", i), Port: uint32(1000 + i)})
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := len(reg.ServiceByKey(svc.Key()).Ports); got != 20 {
		t.Errorf("after 20 concurrent updates adding a port each, the service has %d ports", got)
	}
}

// A memory registry waits for Run, then for its initial state to reach
// its handlers; nothing once synced.
func TestPendingSync(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: "c1"}
	if got, want := reg.PendingSync(), []registry.Pending{{Shard: shard, Reason: registry.PendingRun}}; !slices.Equal(got, want) {
		t.Errorf("PendingSync before Run = %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- reg.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := registry.WaitSynced(ctx, reg); err != nil {
		t.Fatal(err)
	}
	if got := reg.PendingSync(); got != nil {
		t.Errorf("PendingSync once synced = %v, want nil", got)
	}
}
