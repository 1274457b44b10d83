package aggregate

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// NetworkGateways makes the fake a registry.GatewayDiscovery.
func (f *fakeRegistry) NetworkGateways() []model.NetworkGateway { return f.st.NetworkGateways() }

func (f *fakeRegistry) gateways(gws ...model.NetworkGateway) {
	f.st.SetNetworkGateways(model.SortGateways(gws))
}

// meshFake is a fake that records the mesh networks it is handed.
type meshFake struct {
	*fakeRegistry
	mu   sync.Mutex
	mesh []*model.MeshNetworks
}

func (f *meshFake) SetMeshNetworks(mn *model.MeshNetworks) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mesh = append(f.mesh, mn)
}

// gatewayLog records the gateway lists a subscription receives.
type gatewayLog struct {
	mu    sync.Mutex
	lists [][]model.NetworkGateway
}

func (l *gatewayLog) handler() registry.Handler {
	return registry.HandlerFuncs{NetworkGatewaysFunc: func(e registry.NetworkGatewaysEvent) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lists = append(l.lists, e.Gateways)
	}}
}

func (l *gatewayLog) take() [][]model.NetworkGateway {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lists
	l.lists = nil
	return out
}

func gwAt(network, cluster, addr string, port uint32) model.NetworkGateway {
	return model.NetworkGateway{Network: model.NetworkID(network), Cluster: model.ClusterID(cluster), Address: addr, Port: port, Source: model.GatewayFromService}
}

func TestNetworkGatewaysMergeRegistriesAndMeshNetworks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mesh := &model.MeshNetworks{Networks: map[model.NetworkID]model.MeshNetwork{
			"net-vm": {Gateways: []model.MeshNetworkGateway{{Address: "192.0.2.1", Port: 15443}}},
			"net-a":  {Endpoints: []model.MeshNetworkEndpoints{{FromRegistry: "a"}}},
		}}
		a, b := &meshFake{fakeRegistry: newFake(model.Kubernetes, "a")}, newFake(model.Kubernetes, "b")
		a.gateways(gwAt("net-a", "a", "1.1.1.1", 15443))
		b.gateways(gwAt("net-b", "b", "2.2.2.2", 15443), gwAt("net-b", "b", "gw.example.com", 15443))
		agg, err := New(Options{MeshNetworks: mesh})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(a)
		_ = agg.Add(b)
		stop := run(t, agg)
		defer stop()
		synctest.Wait()

		static := model.NetworkGateway{Network: "net-vm", Address: "192.0.2.1", Port: 15443, Source: model.GatewayFromMeshNetworks}
		want := []model.NetworkGateway{gwAt("net-a", "a", "1.1.1.1", 15443), gwAt("net-b", "b", "2.2.2.2", 15443), gwAt("net-b", "b", "gw.example.com", 15443), static}
		if got := agg.NetworkGateways(); !slices.Equal(got, want) {
			t.Fatalf("NetworkGateways() = %v, want %v", got, want)
		}
		// b's gateways lead into net-b, which the mesh networks lack.
		if !hasMeshDiagnostic(agg, "net-b", "do not declare") {
			t.Errorf("diagnostics %v, want one for net-b", agg.Diagnostics())
		}
		if hasMeshDiagnostic(agg, "net-a", "") {
			t.Errorf("diagnostics %v: net-a is declared and has its registry", agg.Diagnostics())
		}
		a.mu.Lock()
		if len(a.mesh) != 1 || a.mesh[0] != mesh {
			t.Errorf("registry a was handed mesh networks %v, want the aggregate's once", a.mesh)
		}
		a.mu.Unlock()

		log := &gatewayLog{}
		defer agg.Subscribe(log.handler())()
		synctest.Wait()
		if got := log.take(); len(got) != 1 || !slices.Equal(got[0], want) {
			t.Errorf("replayed gateways %v, want one list %v", got, want)
		}

		// A change of one registry's list: one event, the merged list.
		b.gateways(gwAt("net-b", "b", "2.2.2.3", 15443))
		synctest.Wait()
		want = []model.NetworkGateway{gwAt("net-a", "a", "1.1.1.1", 15443), gwAt("net-b", "b", "2.2.2.3", 15443), static}
		if got := log.take(); len(got) != 1 || !slices.Equal(got[0], want) {
			t.Errorf("after b's change: %v, want one list %v", got, want)
		}
		// The same gateway from two registries is one.
		b.gateways(gwAt("net-b", "b", "2.2.2.3", 15443), gwAt("net-a", "a", "1.1.1.1", 15443))
		synctest.Wait()
		if got := log.take(); len(got) != 0 {
			t.Errorf("a duplicate published %v", got)
		}
		// Removing a registry withdraws its gateways.
		if err := agg.Remove(model.Kubernetes, "a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		want = []model.NetworkGateway{gwAt("net-a", "a", "1.1.1.1", 15443), gwAt("net-b", "b", "2.2.2.3", 15443), static}
		if got := agg.NetworkGateways(); !slices.Equal(got, want) {
			t.Errorf("after removing a, b's copy of a's gateway stays: %v, want %v", got, want)
		}
		if err := agg.Remove(model.Kubernetes, "b"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := agg.NetworkGateways(); !slices.Equal(got, []model.NetworkGateway{static}) {
			t.Errorf("with no registry: %v, want the mesh networks' own", got)
		}
		// net-a takes the endpoints of cluster a, which is gone.
		if !hasMeshDiagnostic(agg, "net-a", "no Kubernetes registry") {
			t.Errorf("diagnostics %v, want one for net-a's missing cluster", agg.Diagnostics())
		}
	})
}

func hasMeshDiagnostic(agg *Controller, network, msg string) bool {
	return slices.ContainsFunc(agg.Diagnostics(), func(d model.Diagnostic) bool {
		return d.Kind == "MeshNetworks" && d.Name == network && strings.Contains(d.Message, msg)
	})
}

func TestSubscribeClusterGateways(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFake(model.Kubernetes, "a"), newFake(model.Kubernetes, "b")
		a.gateways(gwAt("net-a", "a", "1.1.1.1", 15443))
		b.gateways(gwAt("net-b", "b", "2.2.2.2", 15443))
		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(a)
		_ = agg.Add(b)
		stop := run(t, agg)
		defer stop()
		log := &gatewayLog{}
		defer agg.SubscribeCluster("a", log.handler())()
		synctest.Wait()
		if got := log.take(); len(got) != 1 || !slices.Equal(got[0], []model.NetworkGateway{gwAt("net-a", "a", "1.1.1.1", 15443)}) {
			t.Errorf("cluster a's subscription got %v, want a's gateway alone", got)
		}
	})
}

// TestNewRefusesInvalidOptions: mesh networks Istio's validation refuses,
// and a metrics Registerer that refuses the aggregate's metrics, are
// New's error.
func TestNewRefusesInvalidOptions(t *testing.T) {
	_, err := New(Options{MeshNetworks: &model.MeshNetworks{Networks: map[model.NetworkID]model.MeshNetwork{
		"n": {Gateways: []model.MeshNetworkGateway{{Address: "192.0.2.1", Port: 0}}},
	}}})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "port 0") {
		t.Errorf("New with a gateway of port 0 = %v, want ErrInvalidOptions naming the port", err)
	}
	if _, err := New(Options{Metrics: refusingRegisterer{prometheus.NewRegistry()}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New with a Registerer that refuses = %v, want ErrInvalidOptions", err)
	}
}

// refusingRegisterer refuses every collector.
type refusingRegisterer struct{ prometheus.Registerer }

func (refusingRegisterer) Register(prometheus.Collector) error { return errors.New("refused") }

func TestParseMeshNetworks(t *testing.T) {
	good := `
networks:
  net-a:
    endpoints:
    - fromRegistry: cluster-a
    - fromCidr: 10.20.0.0/16
    gateways:
    - registryServiceName: eastwest.istio-system.svc.cluster.local
      port: 15443
    - address: 192.0.2.1
      port: 15443
      locality: us-east1
`
	mn, err := ParseMeshNetworks([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := model.MeshNetwork{
		Endpoints: []model.MeshNetworkEndpoints{{FromRegistry: "cluster-a"}, {FromCIDR: netip.MustParsePrefix("10.20.0.0/16")}},
		Gateways: []model.MeshNetworkGateway{
			{RegistryServiceName: "eastwest.istio-system.svc.cluster.local", Port: 15443},
			{Address: "192.0.2.1", Port: 15443},
		},
	}
	got := mn.Networks["net-a"]
	if len(mn.Networks) != 1 || !slices.Equal(got.Endpoints, want.Endpoints) || !slices.Equal(got.Gateways, want.Gateways) {
		t.Errorf("parsed %+v, want %+v", mn.Networks, want)
	}
	for _, tt := range []struct{ name, yaml, err string }{
		{"unknown field", "networks:\n  n:\n    endpoint: []\n", "endpoint"},
		{"bad CIDR", "networks:\n  n:\n    endpoints:\n    - fromCidr: 10.0.0.0/33\n", "fromCidr"},
		{"bad registry", "networks:\n  n:\n    endpoints:\n    - fromRegistry: Not_A_Label\n", "DNS-1123"},
		{"bad port", "networks:\n  n:\n    gateways:\n    - address: 192.0.2.1\n      port: 70000\n", "port 70000"},
		{"bad address", "networks:\n  n:\n    gateways:\n    - address: 'not an address'\n      port: 15443\n", "neither an IP"},
		{"both alternatives", "networks:\n  n:\n    gateways:\n    - address: 192.0.2.1\n      registryServiceName: a.b.svc.cluster.local\n      port: 15443\n", "gw"},
		{"not YAML", "networks: [", "mesh networks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMeshNetworks([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want one containing %q", err, tt.err)
			}
		})
	}
}
