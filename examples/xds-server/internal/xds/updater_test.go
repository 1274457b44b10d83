package xds_test

import (
	"context"
	"sync"
	"testing"
	"time"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/meshreg/meshreg/examples/xds-server/internal/xds"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// countingSource records the Endpoints queries made of a registry, which
// the updater makes exactly when it translates a service's load
// assignments.
type countingSource struct {
	xds.Source
	mu      sync.Mutex
	queries map[model.ServiceKey]int
}

func (c *countingSource) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	c.mu.Lock()
	c.queries[key]++
	c.mu.Unlock()
	return c.Source.Endpoints(key, q)
}

func (c *countingSource) count(key model.ServiceKey) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queries[key]
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// updaterScenario runs an Updater over a memory registry.
type updaterScenario struct {
	reg    *memory.Registry
	src    *countingSource
	caches *xds.Caches
	events chan string
}

func startUpdater(t *testing.T) *updaterScenario {
	t.Helper()
	s := &updaterScenario{reg: memory.New(memory.Options{}), caches: xds.NewCaches(), events: make(chan string, 100)}
	s.src = &countingSource{Source: s.reg, queries: map[model.ServiceKey]int{}}
	u := xds.NewUpdater(s.src, s.caches, xds.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = s.reg.Run(ctx) }()
	go func() { defer wg.Done(); _ = u.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

func (s *updaterScenario) resources(typeURL string) map[string]types.Resource {
	return s.caches.Resources(typeURL)
}

func (s *updaterScenario) cla(t *testing.T, name string) *endpointv3.ClusterLoadAssignment {
	t.Helper()
	r, ok := s.resources(resourcev3.EndpointType)[name]
	if !ok {
		return nil
	}
	return r.(*endpointv3.ClusterLoadAssignment)
}

func claAddrs(cla *endpointv3.ClusterLoadAssignment) []string {
	var out []string
	for _, loc := range cla.GetEndpoints() {
		for _, lb := range loc.GetLbEndpoints() {
			out = append(out, lb.GetEndpoint().GetAddress().GetSocketAddress().GetAddress())
		}
	}
	return out
}

func equalStrings(a []string, b ...string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUpdaterEndpointsEventTouchesOnlyItsService(t *testing.T) {
	s := startUpdater(t)
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	other := memory.Service("other", "default").Port("grpc", 9090).Port("http", 80).Build()
	s.reg.AddService(echo, other)
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	s.reg.SetEndpoints(other.Key(), memory.Endpoint("10.0.1.1", 9090).Port("grpc").Build())

	echoCLA, otherCLA := xds.ClusterName(echo.Hostname, 8080), xds.ClusterName(other.Hostname, 9090)
	eventually(t, "both services' endpoints", func() bool {
		return equalStrings(claAddrs(s.cla(t, echoCLA)), "10.0.0.1") && equalStrings(claAddrs(s.cla(t, otherCLA)), "10.0.1.1")
	})
	for typeURL, want := range map[string]int{
		resourcev3.ListenerType: 3, resourcev3.RouteType: 3, resourcev3.ClusterType: 3, resourcev3.EndpointType: 3,
	} {
		if got := len(s.resources(typeURL)); got != want {
			t.Errorf("%s: %d resources, want %d", typeURL, got, want)
		}
	}
	otherQueries := s.src.count(other.Key())
	before := map[string]map[string]types.Resource{}
	for _, typeURL := range []string{resourcev3.ListenerType, resourcev3.RouteType, resourcev3.ClusterType, resourcev3.EndpointType} {
		before[typeURL] = s.resources(typeURL)
	}

	s.reg.SetEndpoints(echo.Key(),
		memory.Endpoint("10.0.0.2", 9000).Port("grpc").Build(),
		memory.Endpoint("10.0.0.3", 9000).Port("grpc").Build())
	eventually(t, "echo's new endpoints", func() bool {
		return equalStrings(claAddrs(s.cla(t, echoCLA)), "10.0.0.2", "10.0.0.3")
	})

	if got := s.src.count(other.Key()); got != otherQueries {
		t.Errorf("other's endpoints were translated again (%d queries, had %d)", got, otherQueries)
	}
	for typeURL, res := range before {
		after := s.resources(typeURL)
		for name, r := range res {
			if typeURL == resourcev3.EndpointType && name == echoCLA {
				continue
			}
			if after[name] != r {
				t.Errorf("%s %s was replaced by an endpoints event for echo", typeURL, name)
			}
		}
	}
}

func TestUpdaterServiceLifecycle(t *testing.T) {
	s := startUpdater(t)
	echo := memory.Service("echo", "default").Port("grpc", 8080).Build()
	s.reg.AddService(echo)
	s.reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	lis := xds.ListenerName(echo.Hostname, 8080)
	eventually(t, "echo's listener", func() bool { return s.resources(resourcev3.ListenerType)[lis] != nil })

	// A new port adds resources, the old one's stay.
	if err := s.reg.UpdateService(echo.Key(), func(svc *model.Service) {
		svc.Ports = append(svc.Ports, model.Port{Name: "http", Port: 80, Protocol: model.HTTP})
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second port's cluster", func() bool {
		return s.resources(resourcev3.ClusterType)[xds.ClusterName(echo.Hostname, 80)] != nil
	})

	// A service that turns to DNS resolution is no longer served.
	if err := s.reg.UpdateService(echo.Key(), func(svc *model.Service) { svc.Resolution = model.DNS }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every resource to go", func() bool {
		for _, n := range s.caches.Counts() {
			if n != 0 {
				return false
			}
		}
		return true
	})

	// Back to client-side load balancing, then deleted.
	if err := s.reg.UpdateService(echo.Key(), func(svc *model.Service) { svc.Resolution = model.ClientSideLB }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "echo's endpoints again", func() bool {
		return equalStrings(claAddrs(s.cla(t, xds.ClusterName(echo.Hostname, 8080))), "10.0.0.1")
	})
	s.reg.DeleteService(echo.Key())
	eventually(t, "every resource to go after the delete", func() bool {
		for _, n := range s.caches.Counts() {
			if n != 0 {
				return false
			}
		}
		return true
	})
}

func TestUpdaterServesTheServiceThatWinsPrecedence(t *testing.T) {
	s := startUpdater(t)
	host := "api.example.com"
	older := memory.ServiceEntry(host, "a").Port("grpc", 8080).Resolution(model.ClientSideLB).CreatedAt(time.Unix(100, 0)).Build()
	newer := memory.ServiceEntry(host, "b").Port("grpc", 8080).Resolution(model.ClientSideLB).CreatedAt(time.Unix(200, 0)).Build()
	s.reg.AddService(newer)
	s.reg.SetEndpoints(newer.Key(), memory.Endpoint("10.0.0.2", 8080).Port("grpc").Build())
	name := xds.ClusterName(model.Hostname(host), 8080)
	eventually(t, "the newer entry's endpoints", func() bool { return equalStrings(claAddrs(s.cla(t, name)), "10.0.0.2") })

	s.reg.AddService(older)
	s.reg.SetEndpoints(older.Key(), memory.Endpoint("10.0.0.1", 8080).Port("grpc").Build())
	eventually(t, "the older entry's endpoints", func() bool { return equalStrings(claAddrs(s.cla(t, name)), "10.0.0.1") })

	// Endpoints of the shadowed entry change nothing.
	s.reg.SetEndpoints(newer.Key(), memory.Endpoint("10.0.0.3", 8080).Port("grpc").Build())
	s.reg.DeleteService(older.Key())
	eventually(t, "the newer entry's latest endpoints", func() bool { return equalStrings(claAddrs(s.cla(t, name)), "10.0.0.3") })
}
