package kube

import (
	"net/netip"
	"testing"

	"github.com/meshreg/meshreg/model"
)

func TestResolveNetwork(t *testing.T) {
	ranges := newNetworkRanges(map[netip.Prefix]model.NetworkID{
		netip.MustParsePrefix("10.0.0.0/8"):  "wide",
		netip.MustParsePrefix("10.1.0.0/16"): "narrow",
		netip.MustParsePrefix("fd00::/8"):    "v6",
	})
	a := func(s string) []netip.Addr { return []netip.Addr{netip.MustParseAddr(s)} }
	tests := []struct {
		name   string
		labels map[string]string
		addrs  []netip.Addr
		env    networkEnv
		want   model.NetworkID
	}{
		{"label first", map[string]string{labelNetwork: "pod"}, a("10.1.0.1"), networkEnv{cluster: "c", ranges: ranges}, "pod"},
		{"cluster network second", nil, a("10.1.0.1"), networkEnv{cluster: "c", ranges: ranges}, "c"},
		{"most specific range", nil, a("10.1.0.1"), networkEnv{ranges: ranges}, "narrow"},
		{"wider range", nil, a("10.2.0.1"), networkEnv{ranges: ranges}, "wide"},
		{"ipv6", nil, a("fd00::5"), networkEnv{ranges: ranges}, "v6"},
		{"secondary address", nil, []netip.Addr{netip.MustParseAddr("192.168.0.1"), netip.MustParseAddr("fd00::5")}, networkEnv{ranges: ranges}, "v6"},
		{"none", nil, a("192.168.0.1"), networkEnv{ranges: ranges}, ""},
	}
	for _, tt := range tests {
		if got := resolveNetwork(tt.labels, tt.addrs, tt.env); got != tt.want {
			t.Errorf("%s: resolveNetwork = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// FuzzResolveNetwork checks precedence for any input.
func FuzzResolveNetwork(f *testing.F) {
	f.Add("", "", "10.0.0.1", "10.0.0.0/8")
	f.Add("pod", "cl", "fd00::1", "fd00::/7")
	f.Add("", "", "::ffff:10.0.0.1", "0.0.0.0/0")
	f.Fuzz(func(t *testing.T, label, cluster, addr, cidr string) {
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(addr); err == nil {
			addrs = append(addrs, a)
		}
		cidrs := map[netip.Prefix]model.NetworkID{}
		if p, err := netip.ParsePrefix(cidr); err == nil {
			cidrs[p] = "range"
		}
		env := networkEnv{cluster: model.NetworkID(cluster), ranges: newNetworkRanges(cidrs)}
		got := resolveNetwork(map[string]string{labelNetwork: label}, addrs, env)
		switch {
		case label != "" && got != model.NetworkID(label):
			t.Errorf("label ignored: %q", got)
		case label == "" && cluster != "" && got != model.NetworkID(cluster):
			t.Errorf("cluster network ignored: %q", got)
		case label == "" && cluster == "" && got != "" && got != "range":
			t.Errorf("unexpected network %q", got)
		}
	})
}
