package address_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshreg/meshreg/address"
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
		typ := gatewayv1.AddressType(addrType)
		fromNS := gatewayv1.FromNamespaces(from)
		gw := &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wp",
				Labels:      map[string]string{"istio.io/waypoint-for": waypointFor, "topology.istio.io/network": selValue},
				Annotations: map[string]string{"ambient.istio.io/waypoint-inbound-binding": binding}},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "istio-remote", Listeners: []gatewayv1.Listener{{
				Name: "l", Protocol: gatewayv1.ProtocolType(proto), Port: gatewayv1.PortNumber(port),
				AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &fromNS,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{selKey: selValue}}}},
			}}},
			Status: gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Type: &typ, Value: addr}}},
		}
		w, diags := address.WaypointOf(gw, nil, "net", "c1")
		for _, d := range diags {
			if d.Kind != "Gateway" || d.Namespace != "ns" || d.Name != "wp" || d.Message == "" {
				t.Errorf("diagnostic %+v does not name the Gateway", d)
			}
		}
		if w != nil && w.For != waypointFor {
			t.Errorf("waypoint-for %q, want the label's %q", w.For, waypointFor)
		}
		address.NetworkGatewaysOf(gw, "c1")
		meta := address.NewStaticMetadata(gw)
		meta.Waypoint("ns", "wp")
	})
}
