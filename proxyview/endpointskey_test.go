package proxyview

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/meshreg/meshreg/model"
)

// TestEndpointsKey: over random worlds (networks with gateways,
// localities, nodes, hints, every traffic distribution and
// internalTrafficPolicy Local) and random proxies, two proxies with the
// same key for a service get the same endpoints of it.
func TestEndpointsKey(t *testing.T) {
	networks := []model.NetworkID{"", "n1", "n2"}
	clusters := []model.ClusterID{"c1", "c2"}
	localities := []model.Locality{{}, {Region: "r1", Zone: "z1"}, {Region: "r1", Zone: "z2", Subzone: "s"}, {Region: "r2", Zone: "z3"}}
	nodes := []string{"", "node-a", "node-b"}
	distributions := []string{"", model.TrafficPreferSameZone, model.TrafficPreferSameNode}
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			pick := func(n int) int { return rng.IntN(n) }
			f := newFake()
			f.gateways = []model.NetworkGateway{
				{Network: "n1", Cluster: "c1", Address: "192.0.2.1", Port: 15443},
				{Network: "n2", Cluster: "c2", Address: "192.0.2.2", Port: 15443},
			}
			var svcs []*model.Service
			for i := range 6 {
				svc := kube(fmt.Sprintf("s%d", i), "ns")
				svc.TrafficDistribution = distributions[pick(len(distributions))]
				svc.InternalTrafficPolicyLocal = pick(3) == 0
				var eps []*model.Endpoint
				for j := range 1 + pick(6) {
					e := ep(fmt.Sprintf("10.0.%d.%d", i, j), on(networks[pick(len(networks))], clusters[pick(len(clusters))]))
					e.Locality = localities[pick(len(localities))]
					e.NodeName = nodes[pick(len(nodes))]
					e.Health = []model.HealthStatus{model.Healthy, model.Unhealthy, model.Draining}[pick(3)]
					if pick(2) == 0 {
						e.Hints = &model.Hints{ForZones: []string{localities[pick(len(localities))].Zone}, ForNodes: []string{nodes[pick(len(nodes))]}}
					}
					e.Labels = map[string]string{"topology.istio.io/network": string(e.Network)}
					eps = append(eps, e)
				}
				svcs = append(svcs, f.add(svc, eps...))
			}
			snap := f.snapshot(t, Options{TopologyHints: seed%2 == 0})
			var proxies []*Proxy
			for range 80 {
				p := &Proxy{
					Namespace: "ns", Network: networks[pick(len(networks))], Cluster: clusters[pick(len(clusters))],
					Locality: localities[pick(len(localities))], NodeName: nodes[pick(len(nodes))],
					IPs: []netip.Addr{netip.MustParseAddr([]string{"10.9.0.1", "fd00::1"}[pick(2)])},
				}
				if pick(2) == 0 {
					p.Labels = map[string]string{"topology.istio.io/network": string(networks[pick(len(networks))])}
				}
				proxies = append(proxies, p)
			}
			shared := 0
			for _, svc := range svcs {
				byKey := map[EndpointsKey]*Proxy{}
				for _, p := range proxies {
					k := snap.EndpointsKey(p, svc)
					first, ok := byKey[k]
					if !ok {
						byKey[k] = p
						continue
					}
					shared++
					want := snap.Endpoints(first, svc.Key(), "http")
					if diff := cmp.Diff(want, snap.Endpoints(p, svc.Key(), "http"), cmpopts.EquateComparable(netip.Addr{})); diff != "" {
						t.Fatalf("%s: proxies %+v and %+v have one key and different endpoints (-first +other):\n%s", svc.Hostname, *first, *p, diff)
					}
				}
			}
			if shared == 0 {
				t.Fatal("no two proxies shared a key: the test compares nothing")
			}
		})
	}
}
