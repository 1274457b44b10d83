package registry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// fakeDiscovery returns exactly what it holds, in the order it holds it,
// so the dump's own ordering is what the tests see. Only the queries the
// dump uses are meaningful.
type fakeDiscovery struct {
	services  []*model.Service
	endpoints map[model.ServiceKey][]*model.Endpoint
	workloads []*model.WorkloadInstance
	diags     []model.Diagnostic
}

var _ registry.Discovery = (*fakeDiscovery)(nil)

func (f *fakeDiscovery) Services() []*model.Service                         { return f.services }
func (f *fakeDiscovery) GetService(model.Hostname) *model.Service           { return nil }
func (f *fakeDiscovery) ServiceByKey(model.ServiceKey) *model.Service       { return nil }
func (f *fakeDiscovery) Workloads() []*model.WorkloadInstance               { return f.workloads }
func (f *fakeDiscovery) WorkloadsByIP(netip.Addr) []*model.WorkloadInstance { return nil }
func (f *fakeDiscovery) Diagnostics() []model.Diagnostic                    { return f.diags }
func (f *fakeDiscovery) ProxyTargets(registry.ProxyQuery) []model.ServiceTarget {
	return nil
}
func (f *fakeDiscovery) Endpoints(key model.ServiceKey, q registry.EndpointQuery) []*model.Endpoint {
	var out []*model.Endpoint
	for _, ep := range f.endpoints[key] {
		if q.Matches(ep) {
			out = append(out, ep)
		}
	}
	return out
}

// shuffled returns a copy of f with every list in a random order.
func (f *fakeDiscovery) shuffled(rng *rand.Rand) *fakeDiscovery {
	shuffle := func(n int, swap func(i, j int)) { rng.Shuffle(n, swap) }
	out := &fakeDiscovery{
		services:  slices.Clone(f.services),
		endpoints: map[model.ServiceKey][]*model.Endpoint{},
		workloads: slices.Clone(f.workloads),
		diags:     slices.Clone(f.diags),
	}
	shuffle(len(out.services), func(i, j int) { out.services[i], out.services[j] = out.services[j], out.services[i] })
	shuffle(len(out.workloads), func(i, j int) { out.workloads[i], out.workloads[j] = out.workloads[j], out.workloads[i] })
	shuffle(len(out.diags), func(i, j int) { out.diags[i], out.diags[j] = out.diags[j], out.diags[i] })
	for k, eps := range f.endpoints {
		eps = slices.Clone(eps)
		shuffle(len(eps), func(i, j int) { eps[i], eps[j] = eps[j], eps[i] })
		out.endpoints[k] = eps
	}
	return out
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// bookinfo is a registry state with something in every part of the dump,
// and several entries wherever the format prescribes an order.
func bookinfo() *fakeDiscovery {
	reviews := &model.Service{
		Hostname: "reviews.default.svc.cluster.local", Namespace: "default", Name: "reviews",
		Provider: model.Kubernetes,
		Ports:    []model.Port{{Name: "http", Port: 9080, Protocol: model.HTTP}, {Name: "grpc", Port: 9090, Protocol: model.GRPC}},
		Addresses: map[model.ClusterID][]netip.Prefix{
			"cluster-b": prefixes("10.96.1.10/32", "fd00:10::a/128"),
			"cluster-a": prefixes("10.96.0.10/32"),
		},
		ExternalAddresses: map[model.ClusterID][]string{"cluster-a": {"lb.example.com", "203.0.113.7"}},
		Labels:            map[string]string{"app": "reviews"},
		CreationTime:      time.Unix(1700000000, 0),
	}
	// The same hostname declared in another namespace by a ServiceEntry.
	shadow := &model.Service{
		Hostname: "reviews.default.svc.cluster.local", Namespace: "ops", Name: "reviews-se",
		Provider: model.External, Resolution: model.Passthrough,
		ExportTo: []string{"ops", ".", "default"},
	}
	external := &model.Service{
		Hostname: "api.example.com", Namespace: "egress", Name: "api",
		Provider: model.External, Resolution: model.DNS, MeshExternal: true,
		Ports:               []model.Port{{Name: "https", Port: 443, Protocol: model.HTTPS, TargetPort: 8443}},
		Addresses:           map[model.ClusterID][]netip.Prefix{"cluster-a": prefixes("192.168.0.0/16")},
		AutoAddresses:       addrs("240.240.0.1"),
		ExportTo:            []string{"~"},
		Selector:            map[string]string{"app": "api"},
		ServiceAccounts:     []string{"spiffe://cluster.local/ns/egress/sa/api"},
		TrafficDistribution: "PreferClose", InternalTrafficPolicyLocal: true,
	}
	ep := func(port, cluster string, n uint32, ips ...string) *model.Endpoint {
		return &model.Endpoint{
			ServicePortName: port, Cluster: model.ClusterID(cluster), Port: n, Addresses: addrs(ips...),
			Network: "net-1", Locality: model.Locality{Region: "us-east1", Zone: "us-east1-b"},
			ServiceAccount: "spiffe://cluster.local/ns/default/sa/reviews", TLSMode: model.TLSIstio,
			Labels: map[string]string{"app": "reviews", "version": "v1"}, WorkloadKind: model.KindPod,
			WorkloadNamespace: "default", WorkloadName: "reviews-" + ips[0],
		}
	}
	return &fakeDiscovery{
		services: []*model.Service{reviews, shadow, external},
		endpoints: map[model.ServiceKey][]*model.Endpoint{
			reviews.Key(): {
				ep("http", "cluster-a", 9080, "10.1.0.10"),
				ep("http", "cluster-a", 9080, "10.1.0.9"),
				ep("grpc", "cluster-b", 9090, "10.2.0.1", "fd00::1"),
				ep("http", "cluster-b", 9080, "10.2.0.1", "fd00::1"),
				ep("http", "cluster-a", 9081, "10.1.0.9"),
			},
			external.Key(): {
				{ServicePortName: "https", Cluster: "cluster-a", Port: 443, Hostname: "api.example.com", Weight: 3,
					Locality: model.Locality{Zone: "zone-x"}, Health: model.Draining, Serving: true,
					NodeName: "node-1", PodHostname: "api-0", PodSubdomain: "api"},
			},
		},
		workloads: []*model.WorkloadInstance{
			{Kind: model.KindWorkloadEntry, Namespace: "vm", Name: "vm-1", Endpoint: model.Endpoint{Cluster: "cluster-a", Addresses: addrs("10.9.0.1")}},
			{Kind: model.KindPod, Namespace: "default", Name: "reviews-b", Endpoint: model.Endpoint{Cluster: "cluster-b", Addresses: addrs("10.2.0.1")}},
			{Kind: model.KindPod, Namespace: "default", Name: "reviews-2", Endpoint: model.Endpoint{Cluster: "cluster-a", Addresses: addrs("10.1.0.10")}},
			{Kind: model.KindPod, Namespace: "default", Name: "reviews-1", Endpoint: model.Endpoint{Cluster: "cluster-a", Addresses: addrs("10.1.0.9"),
				Labels: map[string]string{"app": "reviews"}, Locality: model.Locality{Region: "us-east1"}}},
		},
		diags: []model.Diagnostic{
			{Severity: model.Warning, Kind: "ServiceEntry", Namespace: "ops", Name: "reviews-se", Message: "hostname taken by a Kubernetes Service"},
			{Severity: model.Error, Kind: "EndpointSlice", Namespace: "default", Name: "reviews-abc", Cluster: "cluster-b", Message: "pod unknown"},
		},
	}
}

func dumpJSON(t *testing.T, d registry.Discovery) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := registry.WriteJSON(&buf, d); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	return buf.Bytes()
}

func TestDumpDeterministic(t *testing.T) {
	d := bookinfo()
	first := dumpJSON(t, d)
	if second := dumpJSON(t, d); !bytes.Equal(first, second) {
		t.Fatalf("two dumps of the same registry differ:\n%s\n---\n%s", first, second)
	}
	// Whatever order the registry returns its lists in.
	rng := rand.New(rand.NewPCG(7, 11))
	for range 20 {
		if other := dumpJSON(t, d.shuffled(rng)); !bytes.Equal(first, other) {
			t.Fatalf("the dump depends on the order of the registry's answers:\n%s\n---\n%s", first, other)
		}
	}
}

func TestDumpEmptyRegistry(t *testing.T) {
	got := string(dumpJSON(t, &fakeDiscovery{}))
	want := `{
  "version": 1,
  "services": [],
  "workloads": [],
  "networkGateways": [],
  "diagnostics": []
}
`
	if got != want {
		t.Errorf("dump of an empty registry:\n%s\nwant:\n%s", got, want)
	}
}

// Empty lists and maps are [] and {}, never null, even when the model
// holds nil.
func TestDumpNeverNull(t *testing.T) {
	bare := &model.Service{Hostname: "bare.example.com", Namespace: "ns", Name: "bare", Provider: model.External}
	d := &fakeDiscovery{
		services:  []*model.Service{bare},
		endpoints: map[model.ServiceKey][]*model.Endpoint{bare.Key(): {{ServicePortName: "tcp"}}},
		workloads: []*model.WorkloadInstance{{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "w"}},
	}
	out := dumpJSON(t, d)
	if bytes.Contains(out, []byte("null")) {
		t.Errorf("dump contains null:\n%s", out)
	}
	var got struct {
		Services []struct {
			Ports             []any          `json:"ports"`
			Addresses         map[string]any `json:"addresses"`
			ExternalAddresses map[string]any `json:"externalAddresses"`
			AutoAddresses     []any          `json:"autoAddresses"`
			ExportTo          []string       `json:"exportTo"`
			Selector          map[string]any `json:"selector"`
			ServiceAccounts   []any          `json:"serviceAccounts"`
			Endpoints         []struct {
				Addresses []any          `json:"addresses"`
				Labels    map[string]any `json:"labels"`
			} `json:"endpoints"`
		} `json:"services"`
		Workloads []struct {
			Addresses []any          `json:"addresses"`
			Labels    map[string]any `json:"labels"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	s := got.Services[0]
	if s.Ports == nil || s.Addresses == nil || s.ExternalAddresses == nil || s.AutoAddresses == nil ||
		s.Selector == nil || s.ServiceAccounts == nil ||
		s.Endpoints[0].Addresses == nil || s.Endpoints[0].Labels == nil ||
		got.Workloads[0].Addresses == nil || got.Workloads[0].Labels == nil {
		t.Errorf("an empty list or map is missing from the dump:\n%s", out)
	}
	if !slices.Equal(s.ExportTo, []string{"*"}) {
		t.Errorf("exportTo of a service that declares none = %v, want [\"*\"]", s.ExportTo)
	}
}

func TestDumpOrderingAndFields(t *testing.T) {
	dump := registry.NewDump(bookinfo())
	var hosts []string
	for _, s := range dump.Services {
		hosts = append(hosts, s.Hostname+" "+s.Namespace)
	}
	if want := []string{
		"api.example.com egress",
		"reviews.default.svc.cluster.local default",
		"reviews.default.svc.cluster.local ops",
	}; !slices.Equal(hosts, want) {
		t.Errorf("services in order %q, want %q (by hostname, then namespace)", hosts, want)
	}

	reviews := dump.Services[1]
	var eps []string
	for _, e := range reviews.Endpoints {
		eps = append(eps, fmt.Sprintf("%s %s %s %d", e.ServicePort, e.Cluster, e.Address, e.Port))
	}
	if want := []string{
		"grpc cluster-b 10.2.0.1 9090",
		"http cluster-a 10.1.0.9 9080",
		"http cluster-a 10.1.0.9 9081",
		"http cluster-a 10.1.0.10 9080", // numeric address order: .9 before .10
		"http cluster-b 10.2.0.1 9080",
	}; !slices.Equal(eps, want) {
		t.Errorf("endpoints in order\n%q\nwant (by servicePort, cluster, address, port)\n%q", eps, want)
	}
	if got := reviews.Endpoints[0].Addresses; !slices.Equal(got, []string{"10.2.0.1", "fd00::1"}) {
		t.Errorf("dual-stack endpoint addresses = %v, want IPv4 first", got)
	}
	if got := []string{reviews.Ports[0].Name, reviews.Ports[1].Name}; !slices.Equal(got, []string{"http", "grpc"}) {
		t.Errorf("ports in order %v, want declaration order", got)
	}

	var ws []string
	for _, w := range dump.Workloads {
		ws = append(ws, w.Cluster+" "+w.Kind+" "+w.Namespace+" "+w.Name)
	}
	if want := []string{
		"cluster-a Pod default reviews-1",
		"cluster-a Pod default reviews-2",
		"cluster-a WorkloadEntry vm vm-1",
		"cluster-b Pod default reviews-b",
	}; !slices.Equal(ws, want) {
		t.Errorf("workloads in order %q, want %q (by cluster, kind, namespace, name)", ws, want)
	}
	if dump.Diagnostics[0].Cluster != "" || dump.Diagnostics[1].Cluster != "cluster-b" {
		t.Errorf("diagnostics not sorted by cluster first: %+v", dump.Diagnostics)
	}
}

func TestDumpAddresses(t *testing.T) {
	dump := registry.NewDump(bookinfo())
	api, reviews, shadow := dump.Services[0], dump.Services[1], dump.Services[2]
	tests := []struct {
		name      string
		got, want []string
	}{
		// A single-IP VIP is printed bare, a range as CIDR.
		{"single IPv4 VIP", reviews.Addresses["cluster-a"], []string{"10.96.0.10"}},
		{"single IPv4 and IPv6 VIPs", reviews.Addresses["cluster-b"], []string{"10.96.1.10", "fd00:10::a"}},
		{"CIDR VIP", api.Addresses["cluster-a"], []string{"192.168.0.0/16"}},
		{"external addresses kept in order", reviews.ExternalAddresses["cluster-a"], []string{"lb.example.com", "203.0.113.7"}},
		{"auto addresses", api.AutoAddresses, []string{"240.240.0.1"}},
		{"exportTo default", reviews.ExportTo, []string{"*"}},
		{"exportTo sorted", shadow.ExportTo, []string{".", "default", "ops"}},
		{"exportTo none", api.ExportTo, []string{"~"}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// The whole rendering of one service, as dump-format.md describes it.
func TestDumpGolden(t *testing.T) {
	d := bookinfo()
	api := d.services[2]
	d = &fakeDiscovery{services: []*model.Service{api}, endpoints: d.endpoints}
	got := string(dumpJSON(t, d))
	want := `{
  "version": 1,
  "services": [
    {
      "hostname": "api.example.com",
      "namespace": "egress",
      "name": "api",
      "provider": "External",
      "resolution": "DNS",
      "meshExternal": true,
      "ports": [
        {
          "name": "https",
          "port": 443,
          "protocol": "HTTPS",
          "targetPort": 8443,
          "targetPortName": ""
        }
      ],
      "addresses": {
        "cluster-a": [
          "192.168.0.0/16"
        ]
      },
      "externalAddresses": {},
      "autoAddresses": [
        "240.240.0.1"
      ],
      "exportTo": [
        "~"
      ],
      "externalName": "",
      "selector": {
        "app": "api"
      },
      "serviceAccounts": [
        "spiffe://cluster.local/ns/egress/sa/api"
      ],
      "trafficDistribution": "PreferClose",
      "internalTrafficPolicy": "Local",
      "endpoints": [
        {
          "servicePort": "https",
          "address": "api.example.com",
          "addresses": [
            "api.example.com"
          ],
          "port": 443,
          "cluster": "cluster-a",
          "network": "",
          "locality": "/zone-x",
          "serviceAccount": "",
          "tlsMode": "disabled",
          "health": "Draining",
          "workload": "",
          "labels": {},
          "weight": 3,
          "nodeName": "node-1",
          "hostname": "api-0",
          "subdomain": "api",
          "serving": true
        }
      ]
    }
  ],
  "workloads": [],
  "networkGateways": [],
  "diagnostics": []
}
`
	if got != want {
		t.Errorf("dump:\n%s\nwant:\n%s", got, want)
	}
}

func TestDumpDoesNotModifyRegistryValues(t *testing.T) {
	d := bookinfo()
	before := make([]*model.Service, len(d.services))
	for i, s := range d.services {
		before[i] = s.DeepCopy()
	}
	shadowExport := slices.Clone(d.services[1].ExportTo)
	registry.NewDump(d)
	for i, s := range d.services {
		if !s.Equals(before[i]) {
			t.Errorf("NewDump modified service %s", s.Key())
		}
	}
	if !slices.Equal(d.services[1].ExportTo, shadowExport) {
		t.Errorf("NewDump sorted a service's exportTo in place: %v", d.services[1].ExportTo)
	}
}

// A registry's network gateways are dumped sorted and deduplicated,
// whatever order it returns them in.
func TestDumpNetworkGateways(t *testing.T) {
	r, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	r.SetNetworkGateways(
		model.NetworkGateway{Network: "net-b", Address: "gw.example.com", Port: 15443, HBONEPort: 15008, Source: model.GatewayFromService},
		model.NetworkGateway{Network: "net-a", Address: "192.0.2.1", Port: 15443, Source: model.GatewayFromMeshNetworks},
		model.NetworkGateway{Network: "net-a", Address: "192.0.2.1", Port: 15443, Source: model.GatewayFromMeshNetworks},
	)
	got := registry.NewDump(r).NetworkGateways
	want := []registry.DumpNetworkGateway{
		{Network: "net-a", Cluster: "c1", Address: "192.0.2.1", Port: 15443, Source: "MeshNetworks"},
		{Network: "net-b", Cluster: "c1", Address: "gw.example.com", Port: 15443, HBONEPort: 15008, Source: "Service"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("networkGateways = %+v, want %+v", got, want)
	}
	// A Discovery that knows no gateways dumps [].
	var buf bytes.Buffer
	if err := registry.WriteJSON(&buf, struct{ registry.Discovery }{r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"networkGateways": [],`) {
		t.Errorf("dump of a Discovery without gateways:\n%s", buf.String())
	}
}

// An endpoint confined to its cluster says so; one any proxy may be sent
// omits the field, which a reader takes as AlwaysDiscoverable.
func TestDumpDiscoverability(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	svc := memory.Service("reviews", "default").Port("http", 9080).Build()
	reg.AddService(svc)
	local := memory.Endpoint("10.1.0.2", 9080).Port("http").Build()
	local.Discoverability = model.DiscoverableFromSameCluster
	reg.SetEndpoints(svc.Key(), memory.Endpoint("10.1.0.1", 9080).Port("http").Build(), local)
	var buf bytes.Buffer
	if err := registry.WriteJSON(&buf, reg); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Services []struct {
			Endpoints []map[string]any `json:"endpoints"`
		} `json:"services"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	eps := raw.Services[0].Endpoints
	if _, ok := eps[0]["discoverability"]; ok {
		t.Errorf("always discoverable endpoint: discoverability = %v, want the field absent", eps[0]["discoverability"])
	}
	if got := eps[1]["discoverability"]; got != "DiscoverableFromSameCluster" {
		t.Errorf("cluster-local endpoint: discoverability = %v, want DiscoverableFromSameCluster", got)
	}
}
