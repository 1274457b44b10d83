package proxyview

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

func gw(network model.NetworkID, cluster model.ClusterID, addr string, port uint32) model.NetworkGateway {
	return model.NetworkGateway{Network: network, Cluster: cluster, Address: addr, Port: port, Source: model.GatewayFromService}
}

// TestSplitHorizon: endpoints on the proxy's network are sent as they
// are; those on other networks are replaced by their networks' gateways,
// one per gateway and locality, weighted by the endpoints they stand for.
func TestSplitHorizon(t *testing.T) {
	eps := []*model.Endpoint{
		ep("10.0.0.1", on("net1", "c1")),
		ep("10.0.0.2", on("net1", "c1")),
		ep("10.1.0.1", on("net2", "c2")),
		ep("10.1.0.2", on("net2", "c2")),
		ep("10.1.0.3", on("net2", "c2"), func(e *model.Endpoint) { e.TLSMode = model.TLSDisabled }), // no mTLS: no gateway takes it
		ep("10.1.0.4", on("net2", "c2"), func(e *model.Endpoint) { e.Weight = 3 }),
		ep("10.3.0.1", on("net3", "c3")), // no gateway
	}
	tests := []struct {
		name     string
		gateways []model.NetworkGateway
		proxy    Proxy
		opts     Options
		want     []string
	}{
		{name: "no gateway in the mesh: every endpoint directly", proxy: Proxy{Network: "net1"},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy", " 10.1.0.1:8080 w1 Healthy", " 10.1.0.2:8080 w1 Healthy",
				" 10.1.0.3:8080 w1 Healthy", " 10.1.0.4:8080 w3 Healthy", " 10.3.0.1:8080 w1 Healthy"}},
		{name: "one gateway: weight of the endpoints it stands for; a network without one is left out",
			gateways: []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443)}, proxy: Proxy{Network: "net1"},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy", " 192.0.2.1:15443 w5 Healthy gw"}},
		{name: "a network without a gateway, directly on request",
			gateways: []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443)}, proxy: Proxy{Network: "net1"},
			opts: Options{DirectWithoutGateway: true},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy", " 10.3.0.1:8080 w1 Healthy", " 192.0.2.1:15443 w5 Healthy gw"}},
		{name: "two gateways: weights scale by two and split",
			gateways: []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443), gw("net2", "c2", "192.0.2.2", 15443)}, proxy: Proxy{Network: "net1"},
			want: []string{" 10.0.0.1:8080 w2 Healthy", " 10.0.0.2:8080 w2 Healthy", " 192.0.2.1:15443 w5 Healthy gw", " 192.0.2.2:15443 w5 Healthy gw"}},
		{name: "the proxy on the other network",
			gateways: []model.NetworkGateway{gw("net1", "c1", "192.0.2.10", 15443), gw("net2", "c2", "192.0.2.1", 15443)}, proxy: Proxy{Network: "net2"},
			want: []string{" 10.1.0.1:8080 w1 Healthy", " 10.1.0.2:8080 w1 Healthy", " 10.1.0.3:8080 w1 Healthy", " 10.1.0.4:8080 w3 Healthy", " 192.0.2.10:15443 w2 Healthy gw"}},
		{name: "a proxy of no known network goes through every gateway",
			gateways: []model.NetworkGateway{gw("net1", "c1", "192.0.2.10", 15443), gw("net2", "c2", "192.0.2.1", 15443)}, proxy: Proxy{},
			want: []string{" 10.3.0.1:8080 w1 Healthy", " 192.0.2.10:15443 w2 Healthy gw", " 192.0.2.1:15443 w5 Healthy gw"}}, // gateways in network order
		{name: "the gateway of the endpoint's cluster before the network's others",
			gateways: []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443), gw("net2", "c9", "192.0.2.9", 15443)}, proxy: Proxy{Network: "net1"},
			want: []string{" 10.0.0.1:8080 w2 Healthy", " 10.0.0.2:8080 w2 Healthy", " 192.0.2.1:15443 w10 Healthy gw"}},
		{name: "an HBONE-only gateway does not serve sidecars",
			gateways: []model.NetworkGateway{{Network: "net2", Cluster: "c2", Address: "192.0.2.1", HBONEPort: 15008}}, proxy: Proxy{Network: "net1"},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy"}},
		{name: "an IPv6 proxy cannot use an IPv4 gateway",
			gateways: []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443)}, proxy: Proxy{Network: "net1", IPs: ips("fd00::1")},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy"}},
		{name: "a gateway given by a host name not resolved yet is not used",
			gateways: []model.NetworkGateway{gw("net2", "c2", "gw.example.com", 15443)}, proxy: Proxy{Network: "net1"},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Healthy", " 10.1.0.1:8080 w1 Healthy", " 10.1.0.2:8080 w1 Healthy",
				" 10.1.0.3:8080 w1 Healthy", " 10.1.0.4:8080 w3 Healthy", " 10.3.0.1:8080 w1 Healthy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			svc := f.add(kube("echo", "a"), eps...)
			f.gateways = tt.gateways
			s := f.snapshot(t, tt.opts)
			got := flat(s.Endpoints(&tt.proxy, svc.Key(), "http"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGatewayPerLocality: a gateway stands for the endpoints of each
// locality apart, and a locality's weight is its endpoints' sum.
func TestGatewayPerLocality(t *testing.T) {
	f := newFake()
	at := func(l string) func(*model.Endpoint) {
		return func(e *model.Endpoint) { e.Locality = model.ParseLocality(l) }
	}
	svc := f.add(kube("echo", "a"),
		ep("10.0.0.1", on("net1", "c1"), at("r1/z1")),
		ep("10.1.0.1", on("net2", "c2"), at("r2/z1")),
		ep("10.1.0.2", on("net2", "c2"), at("r2/z2")),
		ep("10.1.0.3", on("net2", "c2"), at("r2/z2")),
	)
	f.gateways = []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443)}
	s := f.snapshot(t, Options{})
	got := s.Endpoints(&Proxy{Network: "net1"}, svc.Key(), "http")
	want := []string{"r1/z1 10.0.0.1:8080 w1 Healthy", "r2/z1 192.0.2.1:15443 w1 Healthy gw", "r2/z2 192.0.2.1:15443 w2 Healthy gw"}
	if diff := cmp.Diff(want, flat(got)); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}
	var weights []uint32
	for _, le := range got {
		weights = append(weights, le.Weight)
	}
	if diff := cmp.Diff([]uint32{1, 1, 2}, weights); diff != "" {
		t.Errorf("locality weights (-want +got):\n%s", diff)
	}
	if g := got[2].Endpoints[0]; g.Gateway == nil || g.Gateway.Network != "net2" || g.Workload != nil {
		t.Errorf("gateway endpoint = %+v, want its gateway and no workload", g)
	}
}

func TestEndpointFilters(t *testing.T) {
	sameCluster := func(e *model.Endpoint) { e.Discoverability = model.DiscoverableFromSameCluster }
	draining := func(e *model.Endpoint) { e.Labels = map[string]string{DrainingLabel: "true"} }
	health := func(h model.HealthStatus) func(*model.Endpoint) { return func(e *model.Endpoint) { e.Health = h } }
	tests := []struct {
		name   string
		svc    func(*model.Service)
		opts   Options
		proxy  Proxy
		eps    []*model.Endpoint
		want   []string
		wantEq func(t *testing.T, les []LocalityEndpoints)
	}{
		{name: "unhealthy endpoints are sent, marked",
			eps:  []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", health(model.Unhealthy))},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Unhealthy"}},
		{name: "unhealthy endpoints left out on request", opts: Options{OmitUnhealthyEndpoints: true},
			eps:  []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", health(model.Unhealthy))},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
		{name: "a traffic distribution keeps them", opts: Options{OmitUnhealthyEndpoints: true},
			svc:  func(s *model.Service) { s.TrafficDistribution = model.TrafficPreferSameZone },
			eps:  []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", health(model.Unhealthy))},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Unhealthy"}},
		{name: "terminating endpoints never",
			eps:  []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", health(model.Terminating))},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
		{name: "draining endpoints only for persistent sessions",
			eps:  []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", health(model.Draining)), ep("10.0.0.3", draining)},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
		{name: "draining endpoints of a persistent-session service",
			svc:  func(s *model.Service) { s.Labels = map[string]string{PersistentSessionLabel: "sticky"} },
			eps:  []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", health(model.Draining)), ep("10.0.0.3", draining)},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.2:8080 w1 Draining", " 10.0.0.3:8080 w1 Draining"}},
		{name: "internalTrafficPolicy Local: the proxy's node only", proxy: Proxy{NodeName: "n1"},
			svc:  func(s *model.Service) { s.InternalTrafficPolicyLocal = true },
			eps:  []*model.Endpoint{ep("10.0.0.1", func(e *model.Endpoint) { e.NodeName = "n1" }), ep("10.0.0.2", func(e *model.Endpoint) { e.NodeName = "n2" })},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
		{name: "an endpoint discoverable from its own cluster only reaches that cluster's proxies", proxy: Proxy{Cluster: "c1"},
			eps:  []*model.Endpoint{ep("10.0.0.1", on("", "c1"), sameCluster), ep("10.0.0.2", on("", "c2"), sameCluster), ep("10.0.0.3", on("", "c2"))},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " 10.0.0.3:8080 w1 Healthy"}},
		{name: "a proxy of no known cluster gets none of them",
			eps:  []*model.Endpoint{ep("10.0.0.1", on("", "c1"), sameCluster), ep("10.0.0.3", on("", "c2"))},
			want: []string{" 10.0.0.3:8080 w1 Healthy"}},
		{name: "other ports, DNS names and endpoints without address are left out",
			eps: []*model.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", func(e *model.Endpoint) { e.ServicePortName = "grpc" }),
				{Hostname: "db.example.com", Port: 5432, ServicePortName: "http"}, {Port: 8080, ServicePortName: "http", Network: "net1"}},
			want: []string{" 10.0.0.1:8080 w1 Healthy"}},
		{name: "a unix domain socket endpoint, by its path and no port",
			eps:  []*model.Endpoint{ep("10.0.0.1"), {Hostname: "unix:///var/run/agent.sock", ServicePortName: "http", Health: model.Healthy}},
			want: []string{" 10.0.0.1:8080 w1 Healthy", " unix:///var/run/agent.sock:0 w1 Healthy"}},
		{name: "a unix domain socket endpoint on a network with gateways",
			proxy: Proxy{Network: "net1"},
			eps:   []*model.Endpoint{{Hostname: "unix:///var/run/agent.sock", ServicePortName: "http", Health: model.Healthy, Network: "net1"}},
			want:  []string{" unix:///var/run/agent.sock:0 w1 Healthy"}},
		{name: "a dual-stack endpoint's other address, with DualStack", opts: Options{DualStack: true},
			eps: []*model.Endpoint{ep("10.0.0.1", func(e *model.Endpoint) { e.Addresses = append(e.Addresses, netip.MustParseAddr("fd00::1")) })},
			wantEq: func(t *testing.T, les []LocalityEndpoints) {
				if got := les[0].Endpoints[0].AdditionalAddresses; len(got) != 1 || got[0].String() != "fd00::1" {
					t.Errorf("additional addresses = %v, want [fd00::1]", got)
				}
			}},
		{name: "without DualStack, the primary address alone",
			eps: []*model.Endpoint{ep("10.0.0.1", func(e *model.Endpoint) { e.Addresses = append(e.Addresses, netip.MustParseAddr("fd00::1")) })},
			wantEq: func(t *testing.T, les []LocalityEndpoints) {
				if got := les[0].Endpoints[0].AdditionalAddresses; got != nil {
					t.Errorf("additional addresses = %v, want none", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			svc := kube("echo", "a")
			if tt.svc != nil {
				tt.svc(svc)
			}
			f.add(svc, tt.eps...)
			s := f.snapshot(t, tt.opts)
			got := s.Endpoints(&tt.proxy, svc.Key(), "http")
			if tt.wantEq != nil {
				tt.wantEq(t, got)
				return
			}
			if diff := cmp.Diff(tt.want, flat(got)); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiscoverableAcrossNetworks: an endpoint of another cluster that is
// discoverable from its own only is not sent, and no gateway stands for
// it (Istio filters it before it looks for gateways); its own cluster's
// proxies, on its network, get it.
func TestDiscoverableAcrossNetworks(t *testing.T) {
	f := newFake()
	local := func(e *model.Endpoint) { e.Discoverability = model.DiscoverableFromSameCluster }
	svc := f.add(kube("echo", "a"), ep("10.0.0.1", on("net1", "c1")), ep("10.1.0.1", on("net2", "c2"), local))
	f.gateways = []model.NetworkGateway{gw("net2", "c2", "192.0.2.1", 15443)}
	s := f.snapshot(t, Options{})
	if got, want := flat(s.Endpoints(&Proxy{Network: "net1", Cluster: "c1"}, svc.Key(), "http")), []string{" 10.0.0.1:8080 w1 Healthy"}; !cmp.Equal(got, want) {
		t.Errorf("from c1: %q, want %q", got, want)
	}
	if got, want := flat(s.Endpoints(&Proxy{Network: "net2", Cluster: "c2"}, svc.Key(), "http")), []string{" 10.1.0.1:8080 w1 Healthy"}; !cmp.Equal(got, want) {
		t.Errorf("from c2: %q, want %q (c1's endpoint: no gateway for net1)", got, want)
	}
}

// TestEndpointWithoutAddress: a WorkloadEntry known only by its network
// is reached through that network's gateway, and not at all from its own
// network.
func TestEndpointWithoutAddress(t *testing.T) {
	f := newFake()
	svc := f.add(kube("echo", "a"), &model.Endpoint{Port: 8080, ServicePortName: "http", Network: "net2", TLSMode: model.TLSIstio})
	f.gateways = []model.NetworkGateway{gw("net2", "", "192.0.2.1", 15443)}
	s := f.snapshot(t, Options{})
	if got := flat(s.Endpoints(&Proxy{Network: "net1"}, svc.Key(), "http")); len(got) != 1 || got[0] != " 192.0.2.1:15443 w1 Healthy gw" {
		t.Errorf("from net1: %q, want the gateway", got)
	}
	if got := s.Endpoints(&Proxy{Network: "net2"}, svc.Key(), "http"); got != nil {
		t.Errorf("from net2: %q, want nothing", flat(got))
	}
}

func TestEndpointsOfUnknownServiceOrPort(t *testing.T) {
	f := newFake()
	svc := f.add(kube("echo", "a"), ep("10.0.0.1"))
	s := f.snapshot(t, Options{})
	if got := s.Endpoints(&Proxy{}, svc.Key(), "nope"); got != nil {
		t.Errorf("unknown port: %v", flat(got))
	}
	if got := s.Endpoints(&Proxy{}, model.ServiceKey{Namespace: "a", Hostname: "nope"}, "http"); got != nil {
		t.Errorf("unknown service: %v", flat(got))
	}
}
