package store_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// benchStore returns a store of the kube shard holding n services of two
// ports (http, grpc), each with e pod endpoints per port, and the keys.
func benchStore(n, e int) (*store.Store, []model.ServiceKey) {
	st := store.New()
	keys := make([]model.ServiceKey, n)
	ip := 0
	for i := range n {
		svc := kubeService(fmt.Sprintf("ns-%d", i%20), fmt.Sprintf("svc-%05d", i))
		svc.Ports = append(svc.Ports, model.Port{Name: "grpc", Port: 9090, Protocol: model.GRPC})
		st.UpsertService(svc)
		keys[i] = svc.Key()
		st.SetEndpoints(kubeShard, keys[i], benchEndpoints(ip, e))
		ip += e
	}
	st.MarkSynced()
	return st, keys
}

// benchEndpoints returns e pods' endpoints on two ports, the pods
// numbered from first; the pods' labels are shared between ports.
func benchEndpoints(first, e int) []*model.Endpoint {
	out := make([]*model.Endpoint, 0, 2*e)
	for j := range e {
		n := first + j
		addr := []netip.Addr{netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})}
		labels := map[string]string{"app": "a", "topology.istio.io/cluster": "c1"}
		for _, p := range [...]struct {
			name string
			port uint32
		}{{"http", 8080}, {"grpc", 9090}} {
			out = append(out, &model.Endpoint{
				Addresses: addr, Port: p.port, ServicePortName: p.name, Cluster: "c1", Labels: labels,
				Health: model.Healthy, WorkloadKind: model.KindPod, WorkloadName: fmt.Sprintf("pod-%d", n),
			})
		}
	}
	return out
}

// BenchmarkSetEndpoints replaces a 100-pod list by one in which one
// endpoint changed health, as a registry publishes a readiness flip (the
// other endpoints are the same values): compare, re-index, publish.
func BenchmarkSetEndpoints(b *testing.B) {
	st, keys := benchStore(100, 100)
	flipHealth(b, st, keys[0])
}

// flipHealth sets the kube shard's list of key to a 100-pod list and to
// the same list with one endpoint's health flipped, in turn, b.N times.
func flipHealth(b *testing.B, st *store.Store, key model.ServiceKey) {
	first := benchEndpoints(0, 100)
	lists := [2][]*model.Endpoint{first, slices.Clone(first)}
	lists[1][10] = lists[1][10].DeepCopy()
	lists[1][10].Health = model.Unhealthy
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st.SetEndpoints(kubeShard, key, lists[i%2])
	}
}

// BenchmarkSetEndpointsTwoShards is BenchmarkSetEndpoints with a second
// cluster's list of the service, as the aggregate's store holds it: a
// change to one list merges the two again.
func BenchmarkSetEndpointsTwoShards(b *testing.B) {
	st, keys := benchStore(100, 100)
	other := model.ShardKey{Provider: model.Kubernetes, Cluster: "c2"}
	second := benchEndpoints(10000, 100)
	for _, ep := range second {
		ep.Cluster = other.Cluster
	}
	st.SetEndpoints(other, keys[0], second)
	flipHealth(b, st, keys[0])
}

// BenchmarkSetEndpointsUnchanged is the no-op: an equal list publishes
// nothing.
func BenchmarkSetEndpointsUnchanged(b *testing.B) {
	st, keys := benchStore(100, 100)
	eps := benchEndpoints(0, 100)
	st.SetEndpoints(kubeShard, keys[0], eps)
	same := benchEndpoints(0, 100)
	b.ReportAllocs()
	for b.Loop() {
		st.SetEndpoints(kubeShard, keys[0], same)
	}
}

// queryStore is a store of 10,000 services of 10 pods, shared by the
// query benchmarks.
func queryStore(b testing.TB) (*store.Store, []model.ServiceKey) {
	return benchStore(10000, 10)
}

var (
	missHost = model.Hostname("none.none.svc.cluster.local")
	missKey  = model.ServiceKey{Namespace: "none", Hostname: missHost}
	missIP   = netip.MustParseAddr("192.0.2.1")
)

func BenchmarkQueries(b *testing.B) {
	r, keys := queryStore(b)
	all := registry.EndpointQuery{}
	ip := func(i int) netip.Addr {
		n := i % 100000
		return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
	}
	b.Run("GetService", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if r.GetService(keys[i%len(keys)].Hostname) == nil {
				b.Fatal("missing")
			}
		}
	})
	b.Run("GetService/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.GetService(missHost)
		}
	})
	b.Run("Services", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Services()
		}
	})
	b.Run("Endpoints", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.Endpoints(keys[i%len(keys)], all)
		}
	})
	b.Run("Endpoints/port", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.Endpoints(keys[i%len(keys)], registry.EndpointQuery{Port: "grpc"})
		}
	})
	b.Run("Endpoints/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Endpoints(missKey, all)
		}
	})
	b.Run("ProxyTargets", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip(i)}})
		}
	})
	b.Run("ProxyTargets/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{missIP}})
		}
	})
	b.Run("WorkloadsByIP/miss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.WorkloadsByIP(missIP)
		}
	})
}

// TestLookupMissesDoNotAllocate holds the store to zero allocations for
// lookups that find nothing.
func TestLookupMissesDoNotAllocate(t *testing.T) {
	st, _ := benchStore(50, 5)
	r := st
	all := registry.EndpointQuery{}
	for name, f := range map[string]func(){
		"GetService":    func() { r.GetService(missHost) },
		"ServiceByKey":  func() { r.ServiceByKey(missKey) },
		"Endpoints":     func() { r.Endpoints(missKey, all) },
		"ProxyTargets":  func() { r.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{missIP}}) },
		"WorkloadsByIP": func() { r.WorkloadsByIP(missIP) },
		"Services":      func() { r.Services() }, // cached view
	} {
		f() // build any cached view first
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s miss: %v allocations, want 0", name, n)
		}
	}
}
