package proxyview_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// running starts reg and a view of it, and stops both when the test ends.
func running(t *testing.T, reg interface{ Run(context.Context) error }, v *proxyview.View) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{reg.Run, v.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil {
				t.Errorf("run: %v", err)
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// next waits for the snapshot after s.
func next(t *testing.T, v *proxyview.View, s *proxyview.Snapshot) *proxyview.Snapshot {
	t.Helper()
	select {
	case <-s.Superseded():
		return v.Snapshot()
	case <-time.After(10 * time.Second):
		t.Fatalf("no generation after %d", s.Generation())
		return nil
	}
}

// until waits for a snapshot that satisfies cond.
func until(t *testing.T, v *proxyview.View, what string, cond func(*proxyview.Snapshot) bool) *proxyview.Snapshot {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for s := v.Snapshot(); ; s = v.Snapshot() {
		if cond(s) {
			return s
		}
		select {
		case <-s.Superseded():
		case <-deadline:
			t.Fatalf("timed out waiting for %s (generation %d)", what, s.Generation())
		}
	}
}

func TestViewFollowsTheRegistry(t *testing.T) {
	mem, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	svc := memory.Service("reviews", "default").Port("http", 80).Cluster("c1").VIP("10.96.0.1").Build()
	mem.AddService(svc)
	mem.SetEndpoints(svc.Key(), memory.Endpoint("10.0.0.1", 8080).Port("http").Cluster("c1").Build())

	v, err := proxyview.New(mem, proxyview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		changes []proxyview.Change
	)
	unsubscribe := v.Subscribe(func(c proxyview.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
	defer unsubscribe()
	if s := v.Snapshot(); s.Generation() != 0 || s.Len() != 0 || v.HasSynced() {
		t.Fatalf("before Run: generation %d, %d services, synced %v", s.Generation(), s.Len(), v.HasSynced())
	}
	running(t, mem, v)
	p := &proxyview.Proxy{Namespace: "default", Cluster: "c1"}
	first := until(t, v, "the initial state", func(s *proxyview.Snapshot) bool { return s.Synced() && len(s.Endpoints(p, svc.Key(), "http")) == 1 })
	if got := first.Services(p); len(got) != 1 || got[0].Key() != svc.Key() {
		t.Fatalf("visible services = %v", got)
	}

	// A change is a new generation; the old snapshot keeps its state.
	changed := time.Now()
	mem.SetEndpoints(svc.Key(),
		memory.Endpoint("10.0.0.1", 8080).Port("http").Cluster("c1").Build(),
		memory.Endpoint("10.0.0.2", 8080).Port("http").Cluster("c1").Build())
	second := next(t, v, first)
	second = until(t, v, "the second endpoint", func(s *proxyview.Snapshot) bool { return len(s.Endpoints(p, svc.Key(), "http")[0].Endpoints) == 2 })
	if second.Generation() <= first.Generation() {
		t.Errorf("generation went from %d to %d", first.Generation(), second.Generation())
	}
	if n := len(first.Endpoints(p, svc.Key(), "http")[0].Endpoints); n != 1 {
		t.Errorf("the first snapshot changed: %d endpoints", n)
	}
	if got := v.Inbound(&proxyview.Proxy{Namespace: "default", Cluster: "c1", IPs: []netip.Addr{netip.MustParseAddr("10.0.0.2")}}); len(got) != 1 || got[0].Service.Key() != svc.Key() || got[0].TargetPort != 8080 {
		t.Errorf("inbound of the new endpoint = %v", got)
	}

	// A deleted service leaves the view.
	mem.DeleteService(svc.Key())
	until(t, v, "the service gone", func(s *proxyview.Snapshot) bool { return s.Len() == 0 && len(s.Services(p)) == 0 })

	mu.Lock()
	defer mu.Unlock()
	var saw bool
	for _, c := range changes {
		for _, k := range c.Services {
			saw = saw || k == svc.Key()
		}
	}
	if !saw {
		t.Errorf("no change named %s: %+v", svc.Key(), changes)
	}
	// The first call is the state when Subscribe was called, then each
	// generation with its snapshot.
	// Each is stamped with when its first event reached the view.
	for i, c := range changes {
		if c.Initial != (i == 0) || c.Snapshot == nil || c.Snapshot.Generation() != c.Generation {
			t.Errorf("change %d: Initial %v, snapshot %v, generation %d", i, c.Initial, c.Snapshot != nil, c.Generation)
		}
		if c.Initial != c.Since.IsZero() {
			t.Errorf("change %d: Initial %v, Since %v", i, c.Initial, c.Since)
		}
		if c.Generation == second.Generation() && c.Since.Before(changed) {
			t.Errorf("the change of the second endpoint has Since %v, before the change was made at %v", c.Since, changed)
		}
	}
	if err := v.Run(context.Background()); !errors.Is(err, registry.ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}
}

// TestViewOfAggregate: the view over an aggregate of two clusters takes
// each cluster's VIPs and follows the gateways.
func TestViewOfAggregate(t *testing.T) {
	east, err := memory.New(memory.Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	west, err := memory.New(memory.Options{ClusterID: "west"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*memory.Registry{east, west} {
		c := m.Cluster()
		vip := map[model.ClusterID]string{"east": "10.96.0.1", "west": "10.96.1.1"}[c]
		svc := memory.Service("echo", "shared").Port("http", 80).Cluster(c).VIP(vip).Build()
		m.AddService(svc)
		m.SetEndpoints(svc.Key(), memory.Endpoint(map[model.ClusterID]string{"east": "10.0.0.1", "west": "10.1.0.1"}[c], 8080).
			Port("http").Cluster(c).Network(model.NetworkID("net-"+string(c))).IstioTLS().Build())
	}
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*memory.Registry{east, west} {
		if err := agg.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	v, err := proxyview.New(agg, proxyview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	running(t, agg, v)
	key := model.ServiceKey{Namespace: "shared", Hostname: "echo.shared.svc.cluster.local"}
	p := &proxyview.Proxy{Namespace: "app", Cluster: "west", Network: "net-west"}
	s := until(t, v, "both clusters", func(s *proxyview.Snapshot) bool {
		les := s.Endpoints(p, key, "http")
		return s.Synced() && len(les) == 1 && len(les[0].Endpoints) == 2
	})
	if got := s.Addresses(p, s.Service(p, key.Hostname)); len(got) != 1 || got[0].Addr().String() != "10.96.1.1" {
		t.Errorf("west's VIP = %v, want 10.96.1.1", got)
	}

	// East's gateway appears: from west, east's endpoint goes through it.
	east.SetNetworkGateways(model.NetworkGateway{Network: "net-east", Cluster: "east", Address: "192.0.2.1", Port: 15443})
	s = until(t, v, "the gateway", func(s *proxyview.Snapshot) bool { return len(s.NetworkGateways()) == 1 })
	les := s.Endpoints(p, key, "http")
	var viaGateway, direct int
	for _, e := range les[0].Endpoints {
		if e.Gateway != nil {
			viaGateway++
		} else {
			direct++
		}
	}
	if viaGateway != 1 || direct != 1 {
		t.Errorf("from west: %d direct, %d through a gateway; want 1 and 1", direct, viaGateway)
	}
}

// TestConcurrentQueries reads snapshots from many goroutines while the
// view publishes new generations (run with -race).
func TestConcurrentQueries(t *testing.T) {
	mem, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	var svcs []*model.Service
	for i := range 20 {
		svc := memory.Service(fmt.Sprintf("s%d", i), fmt.Sprintf("ns%d", i%4)).Port("http", 80).Build()
		svcs = append(svcs, svc)
		mem.AddService(svc)
	}
	v, err := proxyview.New(mem, proxyview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	running(t, mem, v)
	until(t, v, "sync", func(s *proxyview.Snapshot) bool { return s.Synced() && s.Len() == 20 })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &proxyview.Proxy{Namespace: fmt.Sprintf("ns%d", g), IPs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := v.Snapshot()
				for _, svc := range s.Services(p) {
					s.Endpoints(p, svc.Key(), "http")
					s.Addresses(p, svc)
				}
				v.Inbound(p)
			}
		}()
	}
	for i := range 200 {
		svc := svcs[i%len(svcs)]
		mem.SetEndpoints(svc.Key(), memory.Endpoint(fmt.Sprintf("10.0.0.%d", i%3+1), 8080).Port("http").Build())
	}
	last := svcs[len(svcs)-1]
	until(t, v, "the last change", func(s *proxyview.Snapshot) bool {
		les := s.Endpoints(&proxyview.Proxy{Namespace: last.Namespace}, last.Key(), "http")
		return len(les) == 1 && les[0].Endpoints[0].Address.String() == fmt.Sprintf("10.0.0.%d", 199%3+1)
	})
	close(stop)
	wg.Wait()
}
