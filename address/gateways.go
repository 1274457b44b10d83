package address

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// Waypoint is a Gateway that can take a workload's or service's
// traffic: any Gateway API Gateway with an address in its status, as
// Istio reads them (the class does not matter; a Gateway of the waypoint
// class gets its address once its proxy is ready).
type Waypoint struct {
	Namespace, Name string
	// Address is where ztunnel sends the traffic: the Gateway's first
	// status address of type Hostname, else its first IP, with the HBONE
	// port; nil when no status address can be used.
	Address *workloadapi.GatewayAddress
	// For is the traffic it takes: "service" (the default), "workload",
	// "all" or "none", from the istio.io/waypoint-for label of the
	// Gateway, else of its GatewayClass.
	For string
	// Binding is how its own pods take traffic from ztunnel, from the
	// ambient.istio.io/waypoint-inbound-binding annotation of the
	// Gateway, else of its GatewayClass ("PROXY" or "PROXY/<port>");
	// nil: HBONE.
	Binding *workloadapi.ApplicationTunnel
	// admitted says which namespaces may use it: those its bound
	// listener's allowedRoutes admit (the listener of the binding's
	// port, or of protocol istio.io/PROXY), else its HBONE listener's
	// (port 15008), else the Gateway's own namespace.
	admitted model.AllowedRoutes
}

// Traffic types a waypoint takes.
const (
	ForService  = "service"
	ForWorkload = "workload"
	ForAll      = "all"
)

// admits reports whether the namespace may use the waypoint.
func (w *Waypoint) admits(ns string, nsLabels map[string]string) bool {
	switch w.admitted.From {
	case model.FromAll:
		return true
	case model.FromSelector:
		return w.admitted.Selector.Matches(nsLabels)
	}
	return w.Namespace == ns
}

// Labels the index reads.
const (
	labelUseWaypoint          = "istio.io/use-waypoint"
	labelUseWaypointNamespace = "istio.io/use-waypoint-namespace"
	labelWaypointFor          = "istio.io/waypoint-for"
	labelGatewayName          = "gateway.networking.k8s.io/gateway-name"
	labelGatewayManaged       = "gateway.istio.io/managed"
	annotationInboundBinding  = "ambient.istio.io/waypoint-inbound-binding"
	proxyListenerProtocol     = "istio.io/PROXY"
	hbonePort                 = 15008
	labelNetwork              = "topology.istio.io/network"
	classEastWest             = "istio-east-west"
)

// WaypointOf returns the waypoint a Gateway is, its IPs on the given
// network (its cluster's); nil when the Gateway has no status address.
// The Gateway's class's labels and annotations are read when the
// Gateway's are not set. The diagnostics name what was not usable.
func WaypointOf(gw *model.Gateway, network model.NetworkID) (*Waypoint, []model.Diagnostic) {
	var diags []model.Diagnostic
	report := func(format string, args ...any) {
		diags = append(diags, model.Diagnostic{Severity: model.Warning, Kind: "Gateway", Namespace: gw.Namespace,
			Name: gw.Name, Cluster: gw.Cluster, Message: fmt.Sprintf(format, args...)})
	}
	if len(gw.StatusAddresses) == 0 {
		if gw.Class == "istio-waypoint" {
			report("waypoint has no address in its status yet; workloads and services that use it get no waypoint")
		}
		return nil, diags
	}
	w := &Waypoint{Namespace: gw.Namespace, Name: gw.Name, For: ForService, admitted: model.AllowedRoutes{From: model.FromSame}}
	if v, ok := gw.ClassLabels[labelWaypointFor]; ok {
		w.For = v
	}
	if v, ok := gw.Labels[labelWaypointFor]; ok {
		w.For = v
	}
	for _, a := range gw.StatusAddresses {
		if a.Type == model.HostnameType {
			w.Address = &workloadapi.GatewayAddress{
				Destination:   &workloadapi.GatewayAddress_Hostname{Hostname: &workloadapi.NamespacedHostname{Namespace: gw.Namespace, Hostname: a.Value}},
				HboneMtlsPort: hbonePort,
			}
			break
		}
	}
	if w.Address == nil {
		for _, a := range gw.StatusAddresses {
			if a.Type != model.IPAddressType {
				continue
			}
			ip, err := netip.ParseAddr(a.Value)
			if err != nil {
				report("status address %q is not an IP; skipped", a.Value)
				continue
			}
			w.Address = &workloadapi.GatewayAddress{
				Destination:   &workloadapi.GatewayAddress_Address{Address: &workloadapi.NetworkAddress{Network: string(network), Address: ip.AsSlice()}},
				HboneMtlsPort: hbonePort,
			}
			break
		}
	}
	ann, ok := gw.Annotations[annotationInboundBinding]
	if !ok {
		ann, ok = gw.ClassAnnotations[annotationInboundBinding]
	}
	if ok {
		b, err := parseBinding(ann)
		if err != nil {
			report("%s %q: %v; ignored", annotationInboundBinding, ann, err)
		}
		w.Binding = b
	}
	if l := boundListener(gw, w.Binding); l != nil && l.AllowedRoutes.From != "" {
		w.admitted = l.AllowedRoutes
	}
	return w, diags
}

// parseBinding reads an inbound binding: "NONE" or "PROXY", with an
// optional "/<port>".
func parseBinding(s string) (*workloadapi.ApplicationTunnel, error) {
	proto, portText, hasPort := strings.Cut(s, "/")
	b := &workloadapi.ApplicationTunnel{}
	switch proto {
	case "NONE":
		b.Protocol = workloadapi.ApplicationTunnel_NONE
	case "PROXY":
		b.Protocol = workloadapi.ApplicationTunnel_PROXY
	default:
		return nil, fmt.Errorf("protocol %q is not NONE or PROXY", proto)
	}
	if hasPort {
		p, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || strings.Contains(portText, "/") {
			return b, fmt.Errorf("port %q is not a port number", portText)
		}
		b.Port = uint32(p)
	}
	return b, nil
}

// boundListener is the listener whose allowedRoutes say who may use the
// waypoint: the one the binding names (by port, else a PROXY listener),
// else the HBONE listener on 15008.
func boundListener(gw *model.Gateway, b *workloadapi.ApplicationTunnel) *model.GatewayListener {
	ls := gw.Listeners
	if b != nil {
		for i := range ls {
			if b.Port != 0 && ls[i].Port == b.Port ||
				b.Port == 0 && b.Protocol == workloadapi.ApplicationTunnel_PROXY && ls[i].Protocol == proxyListenerProtocol {
				return &ls[i]
			}
		}
	}
	for i := range ls {
		if ls[i].Protocol == "HBONE" && ls[i].Port == hbonePort {
			return &ls[i]
		}
	}
	return nil
}

// NetworkGatewaysOf returns the network gateways a Gateway is for Istio's
// ambient mode, when it is a Gateway of the config cluster (local) or
// of another (remote). A Gateway labelled topology.istio.io/network is
// that network's gateway at each of its status addresses (IP or host
// name): in the config cluster when of class istio-remote, on the port
// of its first HBONE listener; in another cluster when of class
// istio-east-west with an HBONE listener in TLS mode Terminate, with no
// port (ztunnel reaches such a gateway by its split-horizon workloads,
// which name port 15008). Its service account is the
// gateway.istio.io/service-account annotation, else its name, with
// "-istio-remote" for class istio-remote, in its namespace.
func NetworkGatewaysOf(gw *model.Gateway, local bool) []model.NetworkGateway {
	network := gw.Labels[labelNetwork]
	if network == "" {
		return nil
	}
	var port uint32
	var found bool
	for _, l := range gw.Listeners {
		if l.Protocol != "HBONE" {
			continue
		}
		if local && gw.Class == model.GatewayClassRemote {
			port, found = l.Port, true
			break
		}
		if !local && gw.Class == classEastWest && l.TLS != nil && l.TLS.Mode == "Terminate" {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	var out []model.NetworkGateway
	for _, a := range gw.StatusAddresses {
		if a.Type != model.IPAddressType && a.Type != model.HostnameType {
			continue
		}
		out = append(out, model.NetworkGateway{Network: model.NetworkID(network), Cluster: gw.Cluster, Address: a.Value,
			Port: port, HBONEPort: port, ServiceAccount: gw.ServiceAccount(), Source: model.GatewayFromGateway})
	}
	return out
}
