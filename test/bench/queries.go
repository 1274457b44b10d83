package bench

import (
	"net/netip"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// QueryResult is the cost of one query, from testing.Benchmark.
type QueryResult struct {
	Name        string  `json:"name"`
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
	// Result is the size of one answer (services, endpoints or
	// targets), to show that a query's cost follows its result.
	Result int `json:"result"`
}

// Query names, in report order.
const (
	QGetService      = "GetService"
	QGetServiceMiss  = "GetService miss"
	QServices        = "Services"
	QEndpoints       = "Endpoints"
	QEndpointsMiss   = "Endpoints miss"
	QProxyTargets    = "ProxyTargets"
	QProxyTargetsMis = "ProxyTargets miss"
	// QProxyTargetsMisSlice passes the IPs as a slice the caller holds
	// (as a proxy's address list is), where the plain miss builds a
	// one-IP slice for each call: through an interface call Go
	// allocates that slice's array at the call site.
	QProxyTargetsMisSlice = "ProxyTargets miss, IPs as a slice"
)

// runQueries measures the queries over d, cycling over the scenario's
// services and pod IPs so that no single entry stays in cache.
func runQueries(d registry.Discovery, sc *Scenario) []QueryResult {
	n := len(sc.Services)
	hosts := make([]model.Hostname, n)
	keys := make([]model.ServiceKey, n)
	for i, s := range sc.Services {
		hosts[i] = model.Hostname(hostname(s.Namespace, s.Name))
		keys[i] = model.ServiceKey{Namespace: s.Namespace, Hostname: hosts[i]}
	}
	ips := make([]netip.Addr, 1024)
	for i := range ips {
		ips[i] = PodIP((i * 7919) % sc.Config.Endpoints()) // a pod per endpoint
	}
	missIP := netip.MustParseAddr("192.0.2.1")
	missKey := model.ServiceKey{Namespace: "none", Hostname: "none.none.svc.cluster.local"}
	all := registry.EndpointQuery{}

	var out []QueryResult
	add := func(name string, result int, f func(b *testing.B)) {
		r := testing.Benchmark(f)
		out = append(out, QueryResult{
			Name: name, Result: result,
			NsPerOp:     float64(r.T.Nanoseconds()) / float64(max(1, r.N)),
			AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp(),
		})
	}
	add(QGetService, 1, func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if d.GetService(hosts[i%n]) == nil {
				b.Fatal("service missing")
			}
		}
	})
	add(QGetServiceMiss, 0, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d.GetService("none.none.svc.cluster.local") != nil {
				b.Fatal("unexpected service")
			}
		}
	})
	add(QServices, len(d.Services()), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(d.Services()) == 0 {
				b.Fatal("no services")
			}
		}
	})
	add(QEndpoints, len(d.Endpoints(keys[0], all)), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if len(d.Endpoints(keys[i%n], all)) == 0 {
				b.Fatal("no endpoints")
			}
		}
	})
	add(QEndpointsMiss, 0, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d.Endpoints(missKey, all) != nil {
				b.Fatal("unexpected endpoints")
			}
		}
	})
	add(QProxyTargets, len(d.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ips[0]}})), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if len(d.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ips[i%len(ips)]}})) == 0 {
				b.Fatal("no targets")
			}
		}
	})
	add(QProxyTargetsMis, 0, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(d.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{missIP}})) != 0 {
				b.Fatal("unexpected targets")
			}
		}
	})
	missIPs := []netip.Addr{missIP}
	add(QProxyTargetsMisSlice, 0, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(d.ProxyTargets(registry.ProxyQuery{IPs: missIPs})) != 0 {
				b.Fatal("unexpected targets")
			}
		}
	})
	return out
}
