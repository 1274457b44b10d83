package proxyview_test

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
)

// fakeResolver answers from a table the test changes.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	lookups int
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	a, ok := r.answers[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return append([]netip.Addr(nil), a...), nil
}

func (r *fakeResolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	r.answers[host] = out
}

// gatewayByName returns a registry of cluster west with one service whose
// endpoint is on network east, whose gateway is given by a host name.
func gatewayByName(t *testing.T) (*memory.Registry, *model.Service) {
	t.Helper()
	mem, err := memory.New(memory.Options{ClusterID: "west"})
	if err != nil {
		t.Fatal(err)
	}
	svc := memory.Service("echo", "shared").Port("http", 80).Build()
	mem.AddService(svc)
	mem.SetEndpoints(svc.Key(), memory.Endpoint("10.1.0.1", 8080).Port("http").Cluster("east").Network("east").IstioTLS().Build())
	mem.SetNetworkGateways(model.NetworkGateway{Network: "east", Cluster: "east", Address: "gw.elb.example.com", Port: 15443})
	return mem, svc
}

// TestGatewayHostnameResolved: a gateway given by host name (an AWS load
// balancer's) is one gateway per address it resolves to, and follows the
// name's answers.
func TestGatewayHostnameResolved(t *testing.T) {
	mem, svc := gatewayByName(t)

	r := &fakeResolver{answers: map[string][]netip.Addr{}}
	r.set("gw.elb.example.com", "192.0.2.1", "192.0.2.2")
	v, err := proxyview.New(mem, proxyview.Options{Resolver: r, GatewayResolveInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	running(t, mem, v)
	p := &proxyview.Proxy{Namespace: "app", Network: "west"}
	// The addresses of the gateway endpoints that name the gateway.
	addrs := func(s *proxyview.Snapshot) []string {
		var out []string
		for _, le := range s.Endpoints(p, svc.Key(), "http") {
			for _, e := range le.Endpoints {
				if e.Gateway != nil && e.Gateway.Address == "gw.elb.example.com" {
					out = append(out, netip.AddrPortFrom(e.Address, uint16(e.Port)).String())
				}
			}
		}
		return out
	}
	until(t, v, "both addresses", func(s *proxyview.Snapshot) bool {
		got := addrs(s)
		return len(got) == 2 && got[0] == "192.0.2.1:15443" && got[1] == "192.0.2.2:15443"
	})

	// The name now resolves to one address: the view asks again on its
	// interval.
	r.set("gw.elb.example.com", "192.0.2.3")
	until(t, v, "the new address", func(s *proxyview.Snapshot) bool {
		got := addrs(s)
		return len(got) == 1 && got[0] == "192.0.2.3:15443"
	})
}

// TestGatewayHostnameUnresolved: a name that never resolves gives no
// gateway, and SkipGatewayHostnames makes no lookups.
func TestGatewayHostnameUnresolved(t *testing.T) {
	for _, skip := range []bool{false, true} {
		mem, err := memory.New(memory.Options{ClusterID: "west"})
		if err != nil {
			t.Fatal(err)
		}
		svc := memory.Service("echo", "shared").Port("http", 80).Build()
		mem.AddService(svc)
		mem.SetEndpoints(svc.Key(), memory.Endpoint("10.1.0.1", 8080).Port("http").Cluster("east").Network("east").IstioTLS().Build())
		mem.SetNetworkGateways(model.NetworkGateway{Network: "east", Address: "nowhere.example.com", Port: 15443})
		r := &fakeResolver{answers: map[string][]netip.Addr{}}
		v, err := proxyview.New(mem, proxyview.Options{Resolver: r, SkipGatewayHostnames: skip})
		if err != nil {
			t.Fatal(err)
		}
		running(t, mem, v)
		s := until(t, v, "the gateways", func(s *proxyview.Snapshot) bool { return s.Synced() && len(s.NetworkGateways()) == 1 })
		// Without a usable gateway the mesh is not multi-network: the
		// endpoint is sent as it is.
		if got := s.Endpoints(&proxyview.Proxy{Network: "west"}, svc.Key(), "http"); len(got) != 1 || got[0].Endpoints[0].Gateway != nil {
			t.Errorf("skip=%v: endpoints %+v, want the endpoint itself", skip, got)
		}
		r.mu.Lock()
		if n := r.lookups; skip && n != 0 {
			t.Errorf("SkipGatewayHostnames: %d lookups", n)
		}
		r.mu.Unlock()
	}
}

// blockingResolver answers once released, and says when it is first asked.
type blockingResolver struct {
	asked, release chan struct{}
	once           sync.Once
	addr           netip.Addr
}

func (r *blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	r.once.Do(func() { close(r.asked) })
	select {
	case <-r.release:
		return []netip.Addr{r.addr}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestSyncedAfterGatewayNamesLooked: a view has not synced until the host
// names of its gateways have been looked up once, however long the
// lookup takes, so that its first synced snapshot already holds their
// addresses.
func TestSyncedAfterGatewayNamesLooked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, svc := gatewayByName(t)

		r := &blockingResolver{asked: make(chan struct{}), release: make(chan struct{}), addr: netip.MustParseAddr("192.0.2.1")}
		v, err := proxyview.New(mem, proxyview.Options{Resolver: r})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go mem.Run(ctx)
		go v.Run(ctx)
		<-r.asked
		time.Sleep(time.Second) // the lookup takes a (fake) second; the rest is done
		synctest.Wait()
		if v.HasSynced() {
			t.Fatal("the view synced while its gateway's host name was being looked up")
		}
		close(r.release)
		synctest.Wait()
		s := v.Snapshot()
		if !s.Synced() {
			t.Fatal("the view has not synced once the lookup answered")
		}
		var got []string
		for _, le := range s.Endpoints(&proxyview.Proxy{Namespace: "app", Network: "west"}, svc.Key(), "http") {
			for _, e := range le.Endpoints {
				got = append(got, netip.AddrPortFrom(e.Address, uint16(e.Port)).String())
			}
		}
		if len(got) != 1 || got[0] != "192.0.2.1:15443" {
			t.Errorf("first synced snapshot's endpoints = %v, want the gateway's resolved address", got)
		}
	})
}
