package model_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/model"
)

func TestSpiffeIdentity(t *testing.T) {
	tests := []struct {
		td, ns, sa, want string
	}{
		{"cluster.local", "default", "bookinfo-reviews", "spiffe://cluster.local/ns/default/sa/bookinfo-reviews"},
		{"example.org", "prod", "default", "spiffe://example.org/ns/prod/sa/default"},
		{"cluster.local", "default", "", ""},
	}
	for _, tt := range tests {
		if got := model.SpiffeIdentity(tt.td, tt.ns, tt.sa); got != tt.want {
			t.Errorf("SpiffeIdentity(%q, %q, %q) = %q, want %q", tt.td, tt.ns, tt.sa, got, tt.want)
		}
	}
}

func TestKubeServiceHostname(t *testing.T) {
	if got := model.KubeServiceHostname("reviews", "default", model.DefaultDomainSuffix); got != "reviews.default.svc.cluster.local" {
		t.Errorf("KubeServiceHostname = %q", got)
	}
	if got := model.KubeServiceHostname("db", "prod", "corp.internal"); got != "db.prod.svc.corp.internal" {
		t.Errorf("KubeServiceHostname with suffix = %q", got)
	}
}

func TestHostnameIsWildcard(t *testing.T) {
	for h, want := range map[model.Hostname]bool{
		"*": true, "*.example.com": true, "example.com": false, "": false, "a.*.com": false,
	} {
		if got := h.IsWildcard(); got != want {
			t.Errorf("Hostname(%q).IsWildcard() = %v, want %v", h, got, want)
		}
	}
}

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"app": "reviews", "version": "v1"}
	tests := []struct {
		name     string
		selector map[string]string
		labels   map[string]string
		want     bool
	}{
		{"nil selects nothing", nil, labels, false},
		{"nil selects nothing, even unlabelled", nil, nil, false},
		{"empty selects everything", map[string]string{}, labels, true},
		{"empty selects unlabelled", map[string]string{}, nil, true},
		{"subset", map[string]string{"app": "reviews"}, labels, true},
		{"all keys", map[string]string{"app": "reviews", "version": "v1"}, labels, true},
		{"value differs", map[string]string{"app": "ratings"}, labels, false},
		{"key missing", map[string]string{"tier": "web"}, labels, false},
		{"empty value must be present", map[string]string{"tier": ""}, labels, false},
		{"empty value present", map[string]string{"tier": ""}, map[string]string{"tier": ""}, true},
	}
	for _, tt := range tests {
		if got := model.SelectorMatches(tt.selector, tt.labels); got != tt.want {
			t.Errorf("%s: SelectorMatches(%v, %v) = %v, want %v", tt.name, tt.selector, tt.labels, got, tt.want)
		}
	}
}

func TestKeysAndStrings(t *testing.T) {
	svc := &model.Service{Hostname: "reviews.default.svc.cluster.local", Namespace: "default", Name: "reviews"}
	if got, want := svc.Key(), (model.ServiceKey{Namespace: "default", Hostname: "reviews.default.svc.cluster.local"}); got != want {
		t.Errorf("Service.Key() = %v, want %v", got, want)
	}
	if got := svc.Key().String(); got != "default/reviews.default.svc.cluster.local" {
		t.Errorf("ServiceKey.String() = %q", got)
	}
	ep := &model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.1")}, Port: 9080, ServicePortName: "http"}
	if got := ep.Key().String(); got != "http/10.1.0.1:9080" {
		t.Errorf("EndpointKey.String() = %q", got)
	}
	w := &model.WorkloadInstance{Kind: model.KindPod, Namespace: "default", Name: "reviews-v1-abc",
		Endpoint: model.Endpoint{Cluster: "cluster-a"}}
	if got := w.Key().String(); got != "cluster-a/Pod/default/reviews-v1-abc" {
		t.Errorf("WorkloadKey.String() = %q", got)
	}
	if got := (model.ShardKey{Provider: model.External, Cluster: "c1"}).String(); got != "External/c1" {
		t.Errorf("ShardKey.String() = %q", got)
	}
	d := model.Diagnostic{Severity: model.Error, Kind: "ServiceEntry", Namespace: "ns", Name: "se", Cluster: "c1", Message: "no hosts"}
	if got := d.String(); got != "Error ServiceEntry ns/se [c1]: no hosts" {
		t.Errorf("Diagnostic.String() = %q", got)
	}
	d.Cluster = ""
	if got := d.String(); got != "Error ServiceEntry ns/se: no hosts" {
		t.Errorf("Diagnostic.String() without cluster = %q", got)
	}
}

func TestEndpointAddresses(t *testing.T) {
	v4, v6 := netip.MustParseAddr("10.1.0.1"), netip.MustParseAddr("fd00::1")
	tests := []struct {
		name     string
		ep       model.Endpoint
		primary  string
		all      []string
		workload string
	}{
		{"dual stack", model.Endpoint{Addresses: []netip.Addr{v4, v6}, WorkloadNamespace: "ns", WorkloadName: "pod-1"},
			"10.1.0.1", []string{"10.1.0.1", "fd00::1"}, "ns/pod-1"},
		{"hostname", model.Endpoint{Hostname: "api.example.com"}, "api.example.com", []string{"api.example.com"}, ""},
		{"nothing", model.Endpoint{}, "", []string{}, ""},
	}
	for _, tt := range tests {
		if got := tt.ep.Address(); got != tt.primary {
			t.Errorf("%s: Address() = %q, want %q", tt.name, got, tt.primary)
		}
		got := tt.ep.AddressStrings()
		if got == nil || !slices.Equal(got, tt.all) {
			t.Errorf("%s: AddressStrings() = %#v, want %#v", tt.name, got, tt.all)
		}
		if got := tt.ep.Workload(); got != tt.workload {
			t.Errorf("%s: Workload() = %q, want %q", tt.name, got, tt.workload)
		}
	}
}

func TestServicePortLookup(t *testing.T) {
	svc := &model.Service{Ports: []model.Port{{Name: "http", Port: 9080}, {Name: "grpc", Port: 9090}}}
	if p, ok := svc.PortByName("grpc"); !ok || p.Port != 9090 {
		t.Errorf("PortByName(grpc) = %v, %v", p, ok)
	}
	if _, ok := svc.PortByName("tcp"); ok {
		t.Error("PortByName(tcp) found a port")
	}
	if p, ok := svc.PortByNumber(9080); !ok || p.Name != "http" {
		t.Errorf("PortByNumber(9080) = %v, %v", p, ok)
	}
	if _, ok := svc.PortByNumber(1); ok {
		t.Error("PortByNumber(1) found a port")
	}
}

func TestCompareEndpoints(t *testing.T) {
	ep := func(port, cluster, addr string, n uint32) *model.Endpoint {
		e := &model.Endpoint{ServicePortName: port, Cluster: model.ClusterID(cluster), Port: n}
		if a, err := netip.ParseAddr(addr); err == nil {
			e.Addresses = []netip.Addr{a}
		} else {
			e.Hostname = addr
		}
		return e
	}
	// Already in dump order.
	want := []*model.Endpoint{
		ep("grpc", "c1", "10.0.0.9", 1),
		ep("http", "c1", "10.0.0.2", 80),
		ep("http", "c1", "10.0.0.10", 80), // numeric, not textual, order
		ep("http", "c1", "10.0.0.10", 81),
		ep("http", "c1", "fd00::1", 80), // IPv4 before IPv6
		ep("http", "c1", "a.example.com", 80),
		ep("http", "c1", "b.example.com", 80), // IPs before hostnames
		ep("http", "c2", "10.0.0.1", 80),
	}
	for i := range want {
		for j := range want {
			got := model.CompareEndpoints(want[i], want[j])
			switch {
			case i < j && got >= 0, i > j && got <= 0, i == j && got != 0:
				t.Errorf("CompareEndpoints(%v, %v) = %d, want sign of %d", want[i].Key(), want[j].Key(), got, i-j)
			}
		}
	}
}

func TestSortDiagnostics(t *testing.T) {
	d := func(cluster, kind, ns, name string, sev model.Severity, msg string) model.Diagnostic {
		return model.Diagnostic{Cluster: model.ClusterID(cluster), Kind: kind, Namespace: ns, Name: name, Severity: sev, Message: msg}
	}
	want := []model.Diagnostic{
		d("", "ServiceEntry", "a", "x", model.Error, "m"),
		d("c1", "Pod", "a", "x", model.Error, "m"),
		d("c1", "ServiceEntry", "a", "x", model.Warning, "m"),
		d("c1", "ServiceEntry", "a", "x", model.Error, "a"),
		d("c1", "ServiceEntry", "a", "x", model.Error, "b"),
		d("c1", "ServiceEntry", "a", "y", model.Warning, "a"),
		d("c1", "ServiceEntry", "b", "a", model.Warning, "a"),
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	model.SortDiagnostics(got)
	if !slices.Equal(got, want) {
		t.Errorf("SortDiagnostics:\n got  %v\n want %v", got, want)
	}
}
