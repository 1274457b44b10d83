package aggregate

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// benchMergedStore returns a merged store holding n Kubernetes Services
// of two ports (http, grpc), each with e pod endpoints per port in
// cluster a, and the keys.
func benchMergedStore(n, e int) (*mergedStore, []model.ServiceKey) {
	s := newMergedStore()
	keys := make([]model.ServiceKey, n)
	for i := range n {
		ns := fmt.Sprintf("ns-%d", i%20)
		svc := &model.Service{
			Hostname: model.KubeServiceHostname(fmt.Sprintf("svc-%05d", i), ns, "cluster.local"), Namespace: ns,
			Name: fmt.Sprintf("svc-%05d", i), Provider: model.Kubernetes, Ports: []model.Port{httpPort, grpcPort},
		}
		s.upsertService(svc)
		keys[i] = svc.Key()
		s.setEndpoints(kubeA, keys[i], benchMergedEndpoints(kubeA, i*e, e))
	}
	s.markSynced()
	return s, keys
}

// benchMergedEndpoints returns e pods' endpoints on two ports in a
// shard's cluster, the pods numbered from first.
func benchMergedEndpoints(shard model.ShardKey, first, e int) []*model.Endpoint {
	out := make([]*model.Endpoint, 0, 2*e)
	for j := range e {
		n := first + j
		addr := []netip.Addr{netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})}
		labels := map[string]string{"app": "a"}
		for _, p := range []model.Port{httpPort, grpcPort} {
			out = append(out, &model.Endpoint{
				Addresses: addr, Port: 8000 + p.Port, ServicePortName: p.Name, Cluster: shard.Cluster, Labels: labels,
				Health: model.Healthy, WorkloadKind: model.KindPod, WorkloadName: fmt.Sprintf("pod-%d", n),
			})
		}
	}
	return out
}

// BenchmarkStoreSetEndpointsMerge changes one of two clusters' lists of
// a service, so the store merges the two sorted lists again.
func BenchmarkStoreSetEndpointsMerge(b *testing.B) {
	s, keys := benchMergedStore(10, 100)
	s.setEndpoints(kubeB, keys[0], benchMergedEndpoints(kubeB, 1000, 100))
	lists := [2][]*model.Endpoint{benchMergedEndpoints(kubeB, 2000, 100), benchMergedEndpoints(kubeB, 2000, 100)}
	lists[1][10] = lists[1][10].DeepCopy()
	lists[1][10].Health = model.Unhealthy
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.setEndpoints(kubeB, keys[0], lists[i%2])
	}
}

var (
	missHost = model.Hostname("none.none.svc.cluster.local")
	missKey  = model.ServiceKey{Namespace: "none", Hostname: missHost}
	missIP   = netip.MustParseAddr("192.0.2.1")
)

// BenchmarkStoreQueries is the merged store's queries over 10,000
// services of 10 pods.
func BenchmarkStoreQueries(b *testing.B) {
	s, keys := benchMergedStore(10000, 10)
	all := registry.EndpointQuery{}
	ip := func(i int) netip.Addr {
		n := i % 100000
		return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
	}
	b.Run("GetService", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if s.GetService(keys[i%len(keys)].Hostname) == nil {
				b.Fatal("missing")
			}
		}
	})
	b.Run("GetService/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.GetService(missHost)
		}
	})
	b.Run("Services", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Services()
		}
	})
	b.Run("Endpoints", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s.Endpoints(keys[i%len(keys)], all)
		}
	})
	b.Run("Endpoints/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Endpoints(missKey, all)
		}
	})
	b.Run("ProxyTargets", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s.ProxyTargets("", ip(i))
		}
	})
	b.Run("ProxyTargets/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.ProxyTargets("", missIP)
		}
	})
}

// TestStoreMissesDoNotAllocate holds the merged store to zero allocations
// for lookups that find nothing.
func TestStoreMissesDoNotAllocate(t *testing.T) {
	s, _ := benchMergedStore(50, 5)
	all := registry.EndpointQuery{}
	for name, f := range map[string]func(){
		"GetService":    func() { s.GetService(missHost) },
		"ServiceByKey":  func() { s.ServiceByKey(missKey) },
		"Endpoints":     func() { s.Endpoints(missKey, all) },
		"ProxyTargets":  func() { s.ProxyTargets("", missIP) },
		"WorkloadsByIP": func() { s.WorkloadsByIP(missIP) },
		"Services":      func() { s.Services() }, // cached view
	} {
		f() // build any cached view first
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s miss: %v allocations, want 0", name, n)
		}
	}
}
