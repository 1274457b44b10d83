package debug_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// registryGateway is TestProxyPage's gateway as the page shows it: with
// the memory registry's cluster.
var registryGateway = registry.DumpNetworkGateway{
	Network: "net-b", Cluster: "cluster-1", Address: "192.0.2.1", Port: 15443, Source: model.GatewaySourceUnknown.String(),
}

// fakeNodes holds connected nodes.
type fakeNodes map[string]debug.Node

func (f fakeNodes) Node(id string) (debug.Node, bool) { n, ok := f[id]; return n, ok }
func (f fakeNodes) IDs() []string {
	var out []string
	for id := range f {
		out = append(out, id)
	}
	return out
}

// viewOf runs a view of reg until it has synced and returns its snapshot.
func viewOf(t *testing.T, reg *memory.Registry) *proxyview.Snapshot {
	t.Helper()
	v, err := proxyview.New(reg, proxyview.Options{SkipGatewayHostnames: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{reg.Run, v.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); !v.HasSynced(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the view did not sync")
		}
	}
	return v.Snapshot()
}

func TestProxyPage(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	echo := memory.Service("echo", "shop").Port("grpc", 8080).VIP("10.96.0.10").Build()
	hidden := memory.Service("hidden", "other").Port("grpc", 8080).ExportTo(".").Build()
	reg.AddService(echo, hidden)
	reg.SetEndpoints(echo.Key(),
		memory.Endpoint("10.1.0.1", 9000).Port("grpc").Network("net-a").Locality("r1/z1").IstioTLS().Build(),
		memory.Endpoint("10.2.0.1", 9000).Port("grpc").Network("net-b").Locality("r2/z2").IstioTLS().Weight(3).Build())
	reg.SetNetworkGateways(model.NetworkGateway{Network: "net-b", Address: "192.0.2.1", Port: 15443})
	snap := viewOf(t, reg)

	nodes := fakeNodes{"client-a": {
		ID: "client-a", Streams: 1, Snapshot: snap,
		Proxy: proxyview.Proxy{
			Namespace: "shop", Cluster: "cluster-1", Network: "net-a", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.9")},
			Labels: map[string]string{"app": "client"}, Locality: model.ParseLocality("r1/z1"),
		},
		Types: []debug.NodeType{{TypeURL: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", Version: "v7", Resources: 1, Versions: 2, Responses: 2}},
	}}
	h := debug.NewHandler(reg, debughttp.Options{}, nodes, nil, nil)

	code, body := get(t, h, "/debug/proxy?node=client-a")
	var page debug.ProxyPage
	if err := json.Unmarshal([]byte(body), &page); code != http.StatusOK || err != nil {
		t.Fatalf("/debug/proxy: %d %v\n%s", code, err, body)
	}
	want := debug.ProxyPage{
		Node: "client-a", Generation: snap.Generation(), Streams: 1,
		Proxy: debug.ProxyInfo{
			Namespace: "shop", Cluster: "cluster-1", Network: "net-a", IPs: []string{"10.1.0.9"}, IPFamilies: "IPv4",
			Labels: map[string]string{"app": "client"}, Locality: "r1/z1",
		},
		XDS: nodes["client-a"].Types,
		// hidden is exported to its own namespace only.
		Services: []debug.ProxyService{{
			Hostname: "echo.shop.svc.cluster.local", Namespace: "shop", Addresses: []string{"10.96.0.10"},
			Ports: []debughttp.ProxyPort{{Name: "grpc", Port: 8080, Endpoints: []debughttp.ProxyEndpoint{
				{Address: "10.1.0.1", Port: 9000, Locality: "r1/z1", Weight: 1, Health: "Healthy"},
				// net-b's endpoint, through its gateway, with its weight.
				{Address: "192.0.2.1", Port: 15443, Locality: "r2/z2", Weight: 3, Health: "Healthy", Gateway: &registryGateway},
			}}},
		}},
	}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Errorf("/debug/proxy (-want +got):\n%s", diff)
	}

	code, body = get(t, h, "/debug/proxy")
	if code != http.StatusBadRequest || !strings.Contains(body, "node=ID") || !strings.Contains(body, "client-a") {
		t.Errorf("/debug/proxy without node = %d %q; want 400 naming the parameter and the connected nodes", code, body)
	}
	code, body = get(t, h, "/debug/proxy?node=nobody")
	if code != http.StatusNotFound || !strings.Contains(body, `node "nobody" is not connected`) {
		t.Errorf("/debug/proxy?node=nobody = %d %q; want 404 saying the node is not connected", code, body)
	}
	if code, _ := get(t, debug.NewHandler(reg, debughttp.Options{}, nil, nil, nil), "/debug/proxy?node=client-a"); code != http.StatusNotFound {
		t.Errorf("/debug/proxy without an xDS server = %d, want 404", code)
	}
}
