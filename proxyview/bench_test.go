package proxyview

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/test/bench"
)

// largeView is a view of a registry the size of the harness's large
// preset: its Services (two ports each, fifty per namespace) with their
// endpoints per port, spread over three zones and two networks, each
// network with a gateway. One Service in ten is exported to its own
// namespace only, one in ten to its own and the next.
func largeView(b *testing.B) (*View, *memory.Registry, []*model.Service) {
	b.Helper()
	cfg := bench.Presets["large"]
	reg, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		b.Fatal(err)
	}
	svcs := make([]*model.Service, 0, cfg.Services)
	for i := range cfg.Services {
		ns := cfg.NamespaceOf(i)
		sb := memory.Service(fmt.Sprintf("svc-%05d", i), ns).Port("http", 80).Port("grpc", 90).Cluster("c1").
			VIP(netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)}).String())
		switch i % 10 {
		case 1:
			sb.ExportTo(".")
		case 2:
			sb.ExportTo(".", cfg.NamespaceOf(i+50))
		}
		svc := sb.Build()
		svcs = append(svcs, svc)
		reg.AddService(svc)
		var eps []*model.Endpoint
		for j := range cfg.EndpointsPerService {
			ip := netip.AddrFrom4([4]byte{10, byte(1 + j%2), byte(i >> 6), byte(i<<2 | j>>2)}).String()
			for _, port := range []string{"http", "grpc"} {
				eps = append(eps, memory.Endpoint(ip, 8080).Port(port).Cluster("c1").Network(model.NetworkID(fmt.Sprintf("net%d", j%2))).
					Locality(fmt.Sprintf("r1/z%d", j%3)).IstioTLS().Build())
			}
		}
		reg.SetEndpoints(svc.Key(), eps...)
	}
	reg.SetNetworkGateways(
		model.NetworkGateway{Network: "net0", Cluster: "c1", Address: "192.0.2.1", Port: 15443},
		model.NetworkGateway{Network: "net1", Cluster: "c1", Address: "192.0.2.2", Port: 15443},
	)
	v, err := New(reg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, svc := range svcs {
		markFrom(v, reg, svc.Key())
	}
	v.markGateways(reg)
	v.apply()
	return v, reg, svcs
}

var benchProxy = &Proxy{Namespace: "ns-007", Cluster: "c1", Network: "net0", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}

// BenchmarkVisibleServices is Snapshot.Services for a proxy: "first" the
// first call after a change to the services (the namespace's list is
// built), "memoized" a later call in the same generation.
func BenchmarkVisibleServices(b *testing.B) {
	v, _, svcs := largeView(b)
	b.Run("first", func(b *testing.B) {
		s := v.Snapshot()
		b.ReportAllocs()
		for b.Loop() {
			s.vis.mu.Lock()
			clear(s.vis.visible)
			s.vis.mu.Unlock()
			if n := len(s.Services(benchProxy)); n < len(svcs)*8/10 {
				b.Fatalf("%d services visible", n)
			}
		}
	})
	b.Run("memoized", func(b *testing.B) {
		s := v.Snapshot()
		s.Services(benchProxy)
		b.ReportAllocs()
		for b.Loop() {
			s.Services(benchProxy)
		}
	})
}

// BenchmarkEndpoints is Snapshot.Endpoints for one port of a service of
// ten endpoints on two networks: half direct, half through the other
// network's gateway.
func BenchmarkEndpoints(b *testing.B) {
	v, _, svcs := largeView(b)
	s := v.Snapshot()
	key := svcs[123].Key()
	if les := s.Endpoints(benchProxy, key, "http"); len(les) != 3 {
		b.Fatalf("%d localities", len(les))
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Endpoints(benchProxy, key, "http")
	}
}

// BenchmarkInbound is View.Inbound for a proxy of one IP.
func BenchmarkInbound(b *testing.B) {
	v, _, _ := largeView(b)
	p := &Proxy{Namespace: "ns-000", Cluster: "c1", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.0")}}
	if n := len(v.Inbound(p)); n != 2 {
		b.Fatalf("%d inbound targets", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		v.Inbound(p)
	}
}

// BenchmarkSnapshot is the cost of a snapshot: "take" View.Snapshot, and
// the next generation after one service's change, "endpoints" one
// endpoint's health, "service" its labels (which moves it in the
// visibility index), each including the read of the changed endpoints
// from the registry.
func BenchmarkSnapshot(b *testing.B) {
	v, reg, svcs := largeView(b)
	b.Run("take", func(b *testing.B) {
		for b.Loop() {
			_ = v.Snapshot()
		}
	})
	svc := svcs[4321]
	eps := reg.Endpoints(svc.Key(), registryAll)
	flipped := make([]*model.Endpoint, len(eps))
	copy(flipped, eps)
	down := *eps[0]
	down.Health = model.Unhealthy
	flipped[0] = &down
	b.Run("endpoints", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i++; i%2 == 0 {
				reg.SetEndpoints(svc.Key(), eps...)
			} else {
				reg.SetEndpoints(svc.Key(), flipped...)
			}
			v.markEndpoints(svc.Key(), reg.Endpoints(svc.Key(), registry.EndpointQuery{}))
			v.apply()
		}
	})
	b.Run("service", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if err := reg.UpdateService(svc.Key(), func(s *model.Service) { s.Labels = map[string]string{"v": fmt.Sprint(i % 2)} }); err != nil {
				b.Fatal(err)
			}
			v.markService(registry.ServiceEvent{Type: model.EventUpdate, Current: reg.ServiceByKey(svc.Key())})
			v.apply()
		}
	})
}
