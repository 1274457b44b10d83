package proxyview

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

// placed returns an endpoint on a network, in a locality and on a node,
// with the topology labels the registries add.
func placed(ip string, network model.NetworkID, locality, node string) *model.Endpoint {
	l := model.ParseLocality(locality)
	return ep(ip, on(network, "c1"), func(e *model.Endpoint) {
		e.Locality, e.NodeName = l, node
		e.Labels = map[string]string{labelCluster: "c1", labelNetwork: string(network), labelRegion: l.Region, labelZone: l.Zone, labelSubzone: l.Subzone, labelHostname: node}
	})
}

// byPriority lists a load assignment as "priority locality address"
// lines.
func byPriority(les []LocalityEndpoints) []string {
	var out []string
	for _, le := range les {
		for _, e := range le.Endpoints {
			out = append(out, fmt.Sprintf("p%d %s %s", le.Priority, le.Locality, e.Address))
		}
	}
	return out
}

// TestTrafficDistributionFailover: a service with a traffic distribution
// gets Istio's failover priorities by network, region, zone (and for
// PreferSameNode subzone and node), numbered without gaps.
func TestTrafficDistributionFailover(t *testing.T) {
	eps := []*model.Endpoint{
		placed("10.0.0.1", "net1", "r1/z1/s1", "n1"),
		placed("10.0.0.2", "net1", "r1/z1/s1", "n2"),
		placed("10.0.0.3", "net1", "r1/z1/s2", "n3"),
		placed("10.0.0.4", "net1", "r1/z2", "n4"),
		placed("10.0.0.5", "net1", "r2/z1", "n5"),
		placed("10.0.0.6", "net2", "r1/z1/s1", "n6"), // another network, no gateway in the mesh: direct
	}
	proxy := &Proxy{Network: "net1", Locality: model.ParseLocality("r1/z1/s1"), NodeName: "n1"}
	tests := []struct {
		td   string
		want []string
	}{
		{"", []string{"p0 r1/z1/s1 10.0.0.1", "p0 r1/z1/s1 10.0.0.2", "p0 r1/z1/s1 10.0.0.6", "p0 r1/z1/s2 10.0.0.3", "p0 r1/z2 10.0.0.4", "p0 r2/z1 10.0.0.5"}},
		// same zone 0; same region 1; another region 2; another network
		// 3 (numbered 3: 0, 1, 2 and 3 are all used).
		{model.TrafficPreferSameZone, []string{"p0 r1/z1/s1 10.0.0.1", "p0 r1/z1/s1 10.0.0.2", "p3 r1/z1/s1 10.0.0.6", "p0 r1/z1/s2 10.0.0.3", "p1 r1/z2 10.0.0.4", "p2 r2/z1 10.0.0.5"}},
		// same node 0; same subzone 1; same zone 2; same region 3;
		// another region 4; another network 5.
		{model.TrafficPreferSameNode, []string{"p0 r1/z1/s1 10.0.0.1", "p1 r1/z1/s1 10.0.0.2", "p5 r1/z1/s1 10.0.0.6", "p2 r1/z1/s2 10.0.0.3", "p3 r1/z2 10.0.0.4", "p4 r2/z1 10.0.0.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.td, func(t *testing.T) {
			f := newFake()
			svc := kube("echo", "a")
			svc.TrafficDistribution = tt.td
			f.add(svc, eps...)
			got := byPriority(f.snapshot(t, Options{}).Endpoints(proxy, svc.Key(), "http"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("priorities (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailoverPrioritiesHaveNoGaps: priorities are renumbered 0, 1, ...
// when some are not used, and a gateway endpoint ranks by its network.
func TestFailoverPrioritiesHaveNoGaps(t *testing.T) {
	f := newFake()
	svc := kube("echo", "a")
	svc.TrafficDistribution = model.TrafficPreferSameZone
	f.add(svc, placed("10.0.0.1", "net1", "r1/z1", "n1"), placed("10.0.0.5", "net1", "r2/z1", "n5"), placed("10.1.0.1", "net2", "r1/z1", "n9"))
	f.gateways = []model.NetworkGateway{gw("net2", "c1", "192.0.2.1", 15443)}
	got := byPriority(f.snapshot(t, Options{}).Endpoints(&Proxy{Network: "net1", Locality: model.ParseLocality("r1/z1")}, svc.Key(), "http"))
	// 0 same zone; 2 another region, now 1; the gateway (network net2,
	// no region): 3+2 = 5, now 2.
	want := []string{"p0 r1/z1 10.0.0.1", "p2 r1/z1 192.0.2.1", "p1 r2/z1 10.0.0.5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("priorities (-want +got):\n%s", diff)
	}
}

func TestTopologyHints(t *testing.T) {
	hint := func(zones, nodes []string) func(*model.Endpoint) {
		return func(e *model.Endpoint) { e.Hints = &model.Hints{ForZones: zones, ForNodes: nodes} }
	}
	unhealthy := func(e *model.Endpoint) { e.Health = model.Unhealthy }
	tests := []struct {
		name  string
		eps   []*model.Endpoint
		proxy Proxy
		off   bool
		want  []string
	}{
		{name: "the proxy's zone", proxy: Proxy{Locality: model.ParseLocality("r1/z1")},
			eps:  []*model.Endpoint{ep("10.0.0.1", hint([]string{"z1"}, nil)), ep("10.0.0.2", hint([]string{"z2"}, nil))},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
		{name: "hints off, as Istio", off: true, proxy: Proxy{Locality: model.ParseLocality("r1/z1")},
			eps:  []*model.Endpoint{ep("10.0.0.1", hint([]string{"z1"}, nil)), ep("10.0.0.2", hint([]string{"z2"}, nil))},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy"}},
		{name: "no endpoint for the proxy's zone: all", proxy: Proxy{Locality: model.ParseLocality("r1/z9")},
			eps:  []*model.Endpoint{ep("10.0.0.1", hint([]string{"z1"}, nil)), ep("10.0.0.2", hint([]string{"z2"}, nil))},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy"}},
		{name: "node hints before zone hints", proxy: Proxy{Locality: model.ParseLocality("r1/z1"), NodeName: "n2"},
			eps:  []*model.Endpoint{ep("10.0.0.1", hint([]string{"z1"}, []string{"n1"})), ep("10.0.0.2", hint([]string{"z1"}, []string{"n2"}))},
			want: []string{" 10.0.0.2:8080 w1 Healthy"}},
		{name: "a ready endpoint without hints: all", proxy: Proxy{Locality: model.ParseLocality("r1/z1")},
			eps:  []*model.Endpoint{ep("10.0.0.1", hint([]string{"z1"}, nil)), ep("10.0.0.2")},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy"}},
		{name: "an unhealthy endpoint without hints does not count, and is left out with the other zones", proxy: Proxy{Locality: model.ParseLocality("r1/z1")},
			eps:  []*model.Endpoint{ep("10.0.0.1", hint([]string{"z1"}, nil)), ep("10.0.0.2", hint([]string{"z2"}, nil)), ep("10.0.0.3", unhealthy)},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			svc := f.add(kube("echo", "a"), tt.eps...)
			got := flat(f.snapshot(t, Options{TopologyHints: !tt.off}).Endpoints(&tt.proxy, svc.Key(), "http"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
		})
	}
}
