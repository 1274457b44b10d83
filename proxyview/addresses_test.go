package proxyview

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

func TestAddresses(t *testing.T) {
	dual := func() *model.Service {
		s := kube("echo", "a")
		s.Addresses = map[model.ClusterID][]netip.Prefix{
			"c1": prefixes("10.96.0.1", "fd00::1"),
			"c2": prefixes("fd00::2", "10.96.0.2"),
		}
		return s
	}
	entry := func(addrs ...string) *model.Service {
		s := serviceEntry("api.example.com", "a", 0)
		if len(addrs) > 0 {
			s.Addresses = map[model.ClusterID][]netip.Prefix{"c1": prefixes(addrs...)}
		}
		s.AutoAddresses = ips("240.240.0.1", "2001:2::1")
		return s
	}
	tests := []struct {
		name  string
		svc   *model.Service
		proxy Proxy
		opts  Options
		want  []netip.Prefix
	}{
		{name: "the proxy's cluster, its family", svc: dual(), proxy: Proxy{Cluster: "c1", IPs: ips("10.0.0.5")}, want: prefixes("10.96.0.1")},
		{name: "IPv6 proxy", svc: dual(), proxy: Proxy{Cluster: "c1", IPs: ips("fd00::5")}, want: prefixes("fd00::1")},
		{name: "dual-stack proxy: the first VIP's family", svc: dual(), proxy: Proxy{Cluster: "c2", IPs: ips("10.0.0.5", "fd00::5")}, want: prefixes("fd00::2")},
		{name: "dual-stack proxy with DualStack: both", svc: dual(), opts: Options{DualStack: true},
			proxy: Proxy{Cluster: "c2", IPs: ips("10.0.0.5", "fd00::5")}, want: prefixes("fd00::2", "10.96.0.2")},
		{name: "a proxy without IPs counts as IPv4", svc: dual(), proxy: Proxy{Cluster: "c2"}, want: prefixes("10.96.0.2")},
		{name: "another cluster: the first cluster's first VIP", svc: dual(), proxy: Proxy{Cluster: "c9"}, want: prefixes("10.96.0.1")},
		{name: "unknown cluster: likewise", svc: dual(), proxy: Proxy{}, want: prefixes("10.96.0.1")},
		{name: "the fallback only in the proxy's family", svc: dual(), proxy: Proxy{Cluster: "c9", IPs: ips("fd00::5")}, want: nil},
		{name: "headless", svc: kube("echo", "a"), proxy: Proxy{Cluster: "c1"}, want: nil},
		{name: "a ServiceEntry's addresses, whatever the family", svc: entry("192.0.2.0/24", "2001:db8::1"),
			proxy: Proxy{Cluster: "c2", IPs: ips("10.0.0.5")}, want: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::1/128")}},
		{name: "allocated VIPs need DNS capture", svc: entry(), proxy: Proxy{IPs: ips("10.0.0.5")}, want: nil},
		{name: "allocated VIPs of the proxy's family", svc: entry(), proxy: Proxy{IPs: ips("fd00::5"), DNSCapture: true}, want: prefixes("2001:2::1")},
		{name: "allocated VIPs, dual-stack with DualStack", svc: entry(), opts: Options{DualStack: true},
			proxy: Proxy{IPs: ips("10.0.0.5", "fd00::5"), DNSCapture: true}, want: prefixes("240.240.0.1", "2001:2::1")},
		{name: "declared addresses win over allocated ones", svc: entry("192.0.2.1"), proxy: Proxy{DNSCapture: true}, want: prefixes("192.0.2.1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.add(tt.svc)
			s := f.snapshot(t, tt.opts)
			got := s.Addresses(&tt.proxy, tt.svc)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("Addresses (-want +got):\n%s", diff)
			}
		})
	}
	// The service's own slices are left as they were.
	svc := dual()
	f := newFake()
	f.add(svc)
	s := f.snapshot(t, Options{})
	s.Addresses(&Proxy{Cluster: "c2", IPs: ips("10.0.0.5")}, svc)
	if got := svc.Addresses["c2"]; got[0] != prefixes("fd00::2")[0] || len(got) != 2 {
		t.Errorf("Addresses modified the service's VIPs: %v", got)
	}
}

func TestIPFamilies(t *testing.T) {
	for _, tt := range []struct {
		ips  []netip.Addr
		want IPFamilies
	}{
		{nil, IPv4},
		{ips("10.0.0.1"), IPv4},
		{ips("::ffff:10.0.0.1"), IPv4},
		{ips("fd00::1"), IPv6},
		{ips("10.0.0.1", "fd00::1"), DualStack},
	} {
		if got := (&Proxy{IPs: tt.ips}).IPFamilies(); got != tt.want {
			t.Errorf("IPFamilies(%v) = %s, want %s", tt.ips, got, tt.want)
		}
	}
}
