package serviceentry

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

var ipOpt = cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{})

var testCtx = convCtx{Cluster: "c1", TrustDomain: "td.local"}

func TestConvertServices(t *testing.T) {
	se := loadSE(t, `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: se, namespace: ns, labels: {l: v}, creationTimestamp: "2024-02-03T04:05:06Z"}
spec:
  hosts: [a.com, b.com]
  addresses: [10.0.0.1, 10.1.0.0/16, 10.0.0.1, "::ffff:10.2.0.1", 10.3.0.7/24]
  ports: [{number: 80, name: http, protocol: HTTP, targetPort: 8080}, {number: 81, name: raw}]
  location: MESH_INTERNAL
  resolution: DNS_ROUND_ROBIN
  exportTo: [z, ".", z]
  subjectAltNames: [b-san, a-san]
  workloadSelector: {labels: {app: x}}
`)
	svcs := convertServices(se, "c1", "")
	if len(svcs) != 2 || svcs[0].Hostname != "a.com" || svcs[1].Hostname != "b.com" {
		t.Fatalf("want one service per host in order, got %v", svcs)
	}
	want := &model.Service{
		Hostname: "a.com", Namespace: "ns", Name: "se", Provider: model.External, Clusters: []model.ClusterID{"c1"},
		Resolution: model.DNSRoundRobin, MeshExternal: false,
		Ports: []model.Port{{Name: "http", Port: 80, Protocol: model.HTTP, TargetPort: 8080}, {Name: "raw", Port: 81, Protocol: model.Unsupported}},
		Addresses: map[model.ClusterID][]netip.Prefix{"c1": {
			netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.1.0.0/16"),
			netip.MustParsePrefix("::ffff:10.2.0.1/128"), netip.MustParsePrefix("10.3.0.0/24"),
		}},
		ExportTo:        []string{".", "z"},
		Labels:          map[string]string{"l": "v"},
		Selector:        map[string]string{"app": "x"},
		ServiceAccounts: []string{"a-san", "b-san"},
		CreationTime:    time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC),
	}
	if !svcs[0].Equals(want) {
		t.Errorf("service differs (-want +got):\n%s", cmp.Diff(want, svcs[0], ipOpt))
	}
}

func TestConvertResolution(t *testing.T) {
	for in, want := range map[string]model.Resolution{
		"NONE": model.Passthrough, "STATIC": model.ClientSideLB, "DNS": model.DNS, "DNS_ROUND_ROBIN": model.DNSRoundRobin,
	} {
		se := loadSE(t, seHead+"  hosts: [a.com]\n  resolution: "+in+"\n")
		if got := convertResolution(se.Spec.Resolution); got != want {
			t.Errorf("%s → %v, want %v", in, got, want)
		}
	}
	if se := loadSE(t, seHead+"  hosts: [a.com]\n"); !convertServices(se, "c", "")[0].MeshExternal {
		t.Error("default location is MESH_EXTERNAL")
	}
}

func TestTargetPort(t *testing.T) {
	p := model.Port{Name: "http", Port: 80}
	pt := model.Port{Name: "http", Port: 80, TargetPort: 8080}
	for _, tc := range []struct {
		name    string
		portMap map[string]uint32
		port    model.Port
		unix    bool
		want    uint32
	}{
		{"port number", nil, p, false, 80},
		{"targetPort", nil, pt, false, 8080},
		{"endpoint port wins", map[string]uint32{"http": 9090}, pt, false, 9090},
		{"other name ignored", map[string]uint32{"grpc": 9090}, pt, false, 8080},
		{"unix has none", map[string]uint32{"http": 9090}, pt, true, 0},
	} {
		if got := targetPort(tc.portMap, tc.port, tc.unix); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestInlineEndpoints(t *testing.T) {
	se := loadSE(t, seHead+`  hosts: [a.com]
  resolution: STATIC
  ports: [{number: 80, name: http}, {number: 90, name: grpc, targetPort: 9000}]
  endpoints:
  - address: 10.0.0.1
    ports: {http: 8080}
    labels: {v: "1", security.istio.io/tlsMode: istio}
    network: n1
    locality: r/z
    weight: 7
    serviceAccount: sa
`)
	eps := inlineEndpoints(se, convertPorts(se), testCtx)
	labels := map[string]string{"v": "1", "security.istio.io/tlsMode": "istio", labelTopologyCluster: "c1",
		labelTopologyNetwork: "n1", labelTopologyRegion: "r", labelTopologyZone: "z"}
	base := model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, Labels: labels, Network: "n1",
		Locality: model.Locality{Region: "r", Zone: "z"}, Cluster: "c1", Weight: 7, TLSMode: model.TLSIstio,
		ServiceAccount: "spiffe://td.local/ns/ns/sa/sa", Serving: true, Origin: se.Name,
	}
	http, grpc := base, base
	http.ServicePortName, http.Port = "http", 8080
	grpc.ServicePortName, grpc.Port = "grpc", 9000
	if diff := cmp.Diff([]*model.Endpoint{&http, &grpc}, eps, ipOpt); diff != "" {
		t.Errorf("endpoints differ (-want +got):\n%s", diff)
	}
}

func TestHostAndWorkloadEndpoints(t *testing.T) {
	ports := []model.Port{{Name: "https", Port: 443}}
	got := hostEndpoints("entry", "a.com", ports, testCtx)
	if len(got) != 1 || got[0].Hostname != "a.com" || got[0].Port != 443 || got[0].Cluster != "c1" || got[0].TLSMode != model.TLSDisabled || got[0].Origin != "entry" {
		t.Errorf("hostEndpoints = %+v", got[0])
	}
	byName := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "w", Endpoint: model.Endpoint{Hostname: "vm.example.com"}}
	if eps := workloadEndpoints(byName, ports, model.ClientSideLB, testCtx); eps != nil {
		t.Errorf("a DNS-named workload must not back a STATIC entry: %v", eps)
	}
	if eps := workloadEndpoints(byName, ports, model.DNS, testCtx); len(eps) != 1 || eps[0].Workload() != "ns/w" || eps[0].WorkloadKind != model.KindWorkloadEntry {
		t.Errorf("DNS entry: %v", eps)
	}
	pod := &model.WorkloadInstance{Kind: model.KindPod, Namespace: "ns", Name: "p", PortMap: map[string]uint32{"https": 8443},
		Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("10.1.1.1")}, Cluster: "other"}}
	eps := workloadEndpoints(pod, ports, model.ClientSideLB, testCtx)
	// A Pod of another cluster keeps its cluster.
	if len(eps) != 1 || eps[0].Port != 8443 || eps[0].Cluster != "other" || eps[0].Workload() != "ns/p" {
		t.Errorf("pod endpoints = %+v", eps[0])
	}
	if pod.Endpoint.Cluster != "other" {
		t.Error("workloadEndpoints modified its input")
	}
}

func TestConvertWorkloadEntry(t *testing.T) {
	head := "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\n"
	for _, tc := range []struct {
		name, yaml string
		check      func(t *testing.T, w *model.WorkloadInstance)
	}{
		{"metadata labels win", head + "metadata: {name: w, namespace: ns, labels: {a: meta, m: '1'}}\nspec: {address: 10.0.0.1, labels: {a: spec, s: '1'}}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				want := map[string]string{"a": "meta", "m": "1", "s": "1", labelTopologyCluster: "c1"}
				if diff := cmp.Diff(want, w.Endpoint.Labels); diff != "" {
					t.Error(diff)
				}
			}},
		{"service account means istio TLS", head + "metadata: {name: w, namespace: ns}\nspec: {address: 10.0.0.1, serviceAccount: sa}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				if w.Endpoint.TLSMode != model.TLSIstio || w.Endpoint.ServiceAccount != "spiffe://td.local/ns/ns/sa/sa" {
					t.Errorf("%+v", w.Endpoint)
				}
			}},
		{"TLS label wins over service account", head + "metadata: {name: w, namespace: ns, labels: {security.istio.io/tlsMode: disabled}}\nspec: {address: 10.0.0.1, serviceAccount: sa}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				if w.Endpoint.TLSMode != model.TLSDisabled {
					t.Errorf("%v", w.Endpoint.TLSMode)
				}
			}},
		{"no identity, no TLS", head + "metadata: {name: w, namespace: ns}\nspec: {address: 10.0.0.1}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				if w.Endpoint.TLSMode != model.TLSDisabled || w.Endpoint.ServiceAccount != "" {
					t.Errorf("%+v", w.Endpoint)
				}
			}},
		{"locality from the older istio-locality label", head + "metadata: {name: w, namespace: ns}\nspec: {address: 10.0.0.1, labels: {istio-locality: r.z.s}}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				if got := w.Endpoint.Locality.String(); got != "r/z/s" {
					t.Errorf("locality = %q, want r/z/s", got)
				}
			}},
		{"the locality field wins over the labels", head + "metadata: {name: w, namespace: ns}\nspec: {address: 10.0.0.1, locality: r1/z1, labels: {topology.istio.io/locality: r2.z2}}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				if got := w.Endpoint.Locality.String(); got != "r1/z1" {
					t.Errorf("locality = %q, want r1/z1", got)
				}
			}},
		{"identity, ports and locality", head + "metadata: {name: w, namespace: ns}\nspec: {address: 'fe80::1', ports: {http: 81}, locality: r/z/s, network: net1, weight: 2}\n",
			func(t *testing.T, w *model.WorkloadInstance) {
				k := w.Key()
				if k != (model.WorkloadKey{Cluster: "c1", Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "w"}) ||
					w.PortMap["http"] != 81 || w.Endpoint.Locality.String() != "r/z/s" || w.Endpoint.Network != "net1" ||
					w.Endpoint.Weight != 2 || !slices.Equal(w.Endpoint.Addresses, []netip.Addr{netip.MustParseAddr("fe80::1")}) ||
					w.Endpoint.Workload() != "ns/w" {
					t.Errorf("%+v", w)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, convertWorkloadEntry(loadWE(t, tc.yaml), testCtx)) })
	}
}

func TestWorkloadEntryHealthy(t *testing.T) {
	head := "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: w, namespace: ns, annotations: {proxy.istio.io/health-checks-enabled: '%s'}}\nspec: {address: 10.0.0.1}\n"
	healthy := "status: {conditions: [{type: Other, status: 'False'}, {type: Healthy, status: 'True'}]}\n"
	unhealthy := "status: {conditions: [{type: Healthy, status: 'False'}]}\n"
	for _, tc := range []struct {
		annotation, status string
		want               bool
	}{
		{"true", "", false},
		{"true", healthy, true},
		{"true", unhealthy, false},
		{"1", "", false},
		{"T", unhealthy, false},
		{"TRUE", healthy, true},
		{"false", unhealthy, true},
		{"0", "", true},
		{"", unhealthy, true},
		{"yes", "", true}, // not a ParseBool value: checks off
	} {
		we := loadWE(t, fmt.Sprintf(head, tc.annotation)+tc.status)
		if got := workloadEntryHealthy(we); got != tc.want {
			t.Errorf("annotation %q, status %q: healthy = %v, want %v", tc.annotation, tc.status, got, tc.want)
		}
	}
	// Without the annotation at all.
	if !workloadEntryHealthy(loadWE(t, "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: w, namespace: ns}\nspec: {address: 10.0.0.1}\n"+unhealthy)) {
		t.Error("no annotation: want healthy")
	}
}

// FuzzServiceEntry feeds arbitrary ServiceEntry specs through validation
// and conversion: neither may panic, and a valid entry converts into one
// service per host with endpoints only for its ports.
func FuzzServiceEntry(f *testing.F) {
	for _, s := range []string{
		`{"hosts":["a.com"],"resolution":"STATIC","ports":[{"number":80,"name":"http"}],"endpoints":[{"address":"1.2.3.4","ports":{"http":8080}}]}`,
		`{"hosts":["a.com","*.b.com"],"addresses":["10.0.0.0/8"],"resolution":"DNS","endpoints":[{"address":"unix:///x"}]}`,
		`{"hosts":["a.com"],"resolution":"DNS_ROUND_ROBIN","ports":[{"number":1,"name":"a"},{"number":1,"name":"a"}]}`,
		`{"hosts":[""],"endpoints":[null],"ports":[null],"workloadSelector":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, spec []byte) {
		se := &networkingv1.ServiceEntry{}
		se.Name, se.Namespace = "se", "ns"
		if se.Spec.UnmarshalJSON(spec) != nil {
			return
		}
		e, err := newEntry(se, testCtx, nsView{})
		if err != nil {
			_ = convertServices(se, "c", "") // must not panic on invalid input either
			return
		}
		if hosts := slices.Compact(slices.Sorted(slices.Values(se.Spec.Hosts))); len(e.services) != len(hosts) {
			t.Fatalf("%d services for %d hosts", len(e.services), len(hosts))
		}
		for _, s := range e.services {
			for _, ep := range e.endpoints(s.Hostname) {
				if _, ok := s.PortByName(ep.ServicePortName); !ok {
					t.Fatalf("endpoint for unknown port %q", ep.ServicePortName)
				}
			}
		}
	})
}

// FuzzWorkloadEntry feeds arbitrary WorkloadEntry specs and metadata
// labels through validation and conversion.
func FuzzWorkloadEntry(f *testing.F) {
	f.Add([]byte(`{"address":"10.0.0.1","labels":{"a":"b"},"ports":{"http":80},"serviceAccount":"sa"}`), "a", "meta")
	f.Add([]byte(`{"network":"n"}`), "", "")
	f.Add([]byte(`{"address":"unix://","locality":"a.b.c.d"}`), "security.istio.io/tlsMode", "istio")
	f.Fuzz(func(t *testing.T, spec []byte, k, v string) {
		we := &networkingv1.WorkloadEntry{}
		we.Name, we.Namespace = "we", "ns"
		we.Labels = map[string]string{k: v}
		if we.Spec.UnmarshalJSON(spec) != nil {
			return
		}
		w := convertWorkloadEntry(we, testCtx) // must not panic, valid or not
		if _, err := validateWorkloadEntry(we); err != nil {
			return
		}
		if w.Endpoint.Labels[k] != v {
			t.Fatalf("metadata label %q=%q lost: %v", k, v, w.Endpoint.Labels)
		}
		if len(w.Endpoint.Addresses) > 0 && w.Endpoint.Hostname != "" {
			t.Fatal("both addresses and hostname")
		}
	})
}
