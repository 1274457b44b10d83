package address_test

import (
	"testing"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/model"
)

// FuzzWaypointOf feeds WaypointOf Gateways with arbitrary labels,
// annotations, status addresses, listeners and selectors: it never
// panics, a waypoint without a usable address has none, and every
// diagnostic names the Gateway.
func FuzzWaypointOf(f *testing.F) {
	f.Add("all", "PROXY/15088", "IPAddress", "10.0.0.1", "HBONE", uint16(15008), "All", "k", "v")
	f.Add("", "", "Hostname", "wp.ns.svc.cluster.local", "istio.io/PROXY", uint16(15088), "Selector", "", "")
	f.Add("service", "BOGUS/x/y", "IPAddress", "not-an-ip", "HTTP", uint16(0), "Same", "a b", "!!")
	f.Add("workload", "NONE/99999", "", "", "HBONE", uint16(15008), "Selector", "k", "v\x00")
	f.Fuzz(func(t *testing.T, waypointFor, binding, addrType, addr, proto string, port uint16, from, selKey, selValue string) {
		gw := &model.Gateway{Cluster: "c1", Namespace: "ns", Name: "wp", Class: "istio-remote",
			Labels:      map[string]string{"istio.io/waypoint-for": waypointFor, "topology.istio.io/network": selValue},
			Annotations: map[string]string{"ambient.istio.io/waypoint-inbound-binding": binding},
			Listeners: []model.GatewayListener{{Name: "l", Protocol: proto, Port: uint32(port),
				TLS:           &model.GatewayTLS{Mode: "Terminate"},
				AllowedRoutes: model.AllowedRoutes{From: from, Selector: &model.LabelSelector{MatchLabels: map[string]string{selKey: selValue}}}}},
			StatusAddresses: []model.GatewayAddress{{Type: addrType, Value: addr}},
		}
		w, diags := address.WaypointOf(gw, "net")
		for _, d := range diags {
			if d.Kind != "Gateway" || d.Namespace != "ns" || d.Name != "wp" || d.Cluster != "c1" || d.Message == "" {
				t.Errorf("diagnostic %+v does not name the Gateway", d)
			}
		}
		if w != nil && w.For != waypointFor {
			t.Errorf("waypoint-for %q, want the label's %q", w.For, waypointFor)
		}
		for _, local := range []bool{true, false} {
			for _, g := range address.NetworkGatewaysOf(gw, local) {
				if g.Address != addr || string(g.Network) != selValue {
					t.Errorf("network gateway %v is not the Gateway's address %q on network %q", g, addr, selValue)
				}
			}
		}
	})
}
