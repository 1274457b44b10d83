package address

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// Metadata is what the index reads beside the registry: the namespaces
// (their waypoint labels) and the waypoints (Gateway API Gateways). Its
// methods are safe for concurrent use.
type Metadata interface {
	// Namespace returns the namespace of that name, nil when unknown.
	Namespace(name string) *Namespace
	// Waypoint returns the waypoint the Gateway namespace/name is; nil
	// when there is no such Gateway or it has no address yet.
	Waypoint(namespace, name string) *Waypoint
	// NetworkGateways returns the network gateways Istio's ambient mode
	// knows: those of the cluster's Gateways of class istio-remote
	// labelled with a network (see NetworkGatewaysOf), sorted by
	// model.NetworkGateway.Compare.
	NetworkGateways() []model.NetworkGateway
	// Diagnostics returns what the metadata could not use.
	Diagnostics() []model.Diagnostic
	// Subscribe registers f, called after each change from any
	// goroutine; f must return quickly. It returns a function that
	// unregisters f.
	Subscribe(f func()) (unsubscribe func())
	// HasSynced reports whether the initial state is complete.
	HasSynced() bool
}

// Namespace is a namespace as the index reads it.
type Namespace struct {
	Name   string
	Labels map[string]string
}

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
	// from and selector say which namespaces may use it: those its
	// bound listener's allowedRoutes admit (the listener of the
	// binding's port, or of protocol istio.io/PROXY), else its HBONE
	// listener's (port 15008), else the Gateway's own namespace.
	from     gatewayv1.FromNamespaces
	selector labels.Selector
}

// Traffic types a waypoint takes.
const (
	ForService  = "service"
	ForWorkload = "workload"
	ForAll      = "all"
)

// admits reports whether the namespace may use the waypoint.
func (w *Waypoint) admits(ns string, nsLabels map[string]string) bool {
	switch w.from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSelector:
		return w.selector != nil && w.selector.Matches(labels.Set(nsLabels))
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
)

// WaypointOf returns the waypoint a Gateway is, given its class (nil
// when unknown) and the network its IPs are on; nil when the Gateway has
// no status address. The diagnostics name what was not usable.
func WaypointOf(gw *gatewayv1.Gateway, class *gatewayv1.GatewayClass, network model.NetworkID, cluster model.ClusterID) (*Waypoint, []model.Diagnostic) {
	var diags []model.Diagnostic
	report := func(format string, args ...any) {
		diags = append(diags, model.Diagnostic{Severity: model.Warning, Kind: "Gateway", Namespace: gw.Namespace,
			Name: gw.Name, Cluster: cluster, Message: fmt.Sprintf(format, args...)})
	}
	if len(gw.Status.Addresses) == 0 {
		if gw.Spec.GatewayClassName == "istio-waypoint" {
			report("waypoint has no address in its status yet; workloads and services that use it get no waypoint")
		}
		return nil, diags
	}
	w := &Waypoint{Namespace: gw.Namespace, Name: gw.Name, For: ForService, from: gatewayv1.NamespacesFromSame}
	if class != nil {
		if v, ok := class.Labels[labelWaypointFor]; ok {
			w.For = v
		}
	}
	if v, ok := gw.Labels[labelWaypointFor]; ok {
		w.For = v
	}
	for _, a := range gw.Status.Addresses {
		if a.Type != nil && *a.Type == gatewayv1.HostnameAddressType {
			w.Address = &workloadapi.GatewayAddress{
				Destination:   &workloadapi.GatewayAddress_Hostname{Hostname: &workloadapi.NamespacedHostname{Namespace: gw.Namespace, Hostname: a.Value}},
				HboneMtlsPort: hbonePort,
			}
			break
		}
	}
	if w.Address == nil {
		for _, a := range gw.Status.Addresses {
			if a.Type == nil || *a.Type != gatewayv1.IPAddressType {
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
	if !ok && class != nil {
		ann, ok = class.Annotations[annotationInboundBinding]
	}
	if ok {
		b, err := parseBinding(ann)
		if err != nil {
			report("%s %q: %v; ignored", annotationInboundBinding, ann, err)
		}
		w.Binding = b
	}
	if l := boundListener(gw, w.Binding); l != nil && l.AllowedRoutes != nil && l.AllowedRoutes.Namespaces != nil {
		ns := l.AllowedRoutes.Namespaces
		if ns.From != nil {
			w.from = *ns.From
		}
		if ns.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(ns.Selector)
			if err != nil {
				report("listener %s: allowedRoutes selector: %v; no namespace selected", l.Name, err)
			} else {
				w.selector = sel
			}
		}
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
func boundListener(gw *gatewayv1.Gateway, b *workloadapi.ApplicationTunnel) *gatewayv1.Listener {
	ls := gw.Spec.Listeners
	if b != nil {
		for i := range ls {
			if b.Port != 0 && uint32(ls[i].Port) == b.Port ||
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

// StaticMetadata is Metadata held in memory: set with Replace, for
// tests, files and callers with their own source of namespaces and
// Gateways. It is synced from the start.
type StaticMetadata struct {
	network model.NetworkID
	cluster model.ClusterID

	mu        sync.RWMutex
	state     metaState
	nextID    int
	listeners map[int]func()
}

type metaState struct {
	namespaces map[string]*Namespace
	waypoints  map[[2]string]*Waypoint
	gateways   []model.NetworkGateway
	diags      []model.Diagnostic
}

// NewStaticMetadata returns metadata holding objs: Namespaces, Gateway
// API Gateways and GatewayClasses; other objects are ignored.
func NewStaticMetadata(objs ...any) *StaticMetadata {
	m := &StaticMetadata{listeners: map[int]func(){}}
	m.state = buildMeta(objs, "", "")
	return m
}

// NewStaticMetadataOn is NewStaticMetadata for Gateways of the given
// cluster, whose IP addresses are on the given network.
func NewStaticMetadataOn(cluster model.ClusterID, network model.NetworkID, objs ...any) *StaticMetadata {
	m := &StaticMetadata{network: network, cluster: cluster, listeners: map[int]func(){}}
	m.state = buildMeta(objs, cluster, network)
	return m
}

// Replace sets the objects the metadata holds and tells subscribers.
func (m *StaticMetadata) Replace(objs ...any) {
	st := buildMeta(objs, m.cluster, m.network)
	m.mu.Lock()
	m.state = st
	fs := make([]func(), 0, len(m.listeners))
	for _, f := range m.listeners {
		fs = append(fs, f)
	}
	m.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

func buildMeta(objs []any, cluster model.ClusterID, network model.NetworkID) metaState {
	st := metaState{namespaces: map[string]*Namespace{}, waypoints: map[[2]string]*Waypoint{}}
	classes := map[string]*gatewayv1.GatewayClass{}
	var gws []*gatewayv1.Gateway
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			st.namespaces[o.Name] = &Namespace{Name: o.Name, Labels: o.Labels}
		case *gatewayv1.GatewayClass:
			classes[o.Name] = o
		case *gatewayv1.Gateway:
			gws = append(gws, o)
		}
	}
	for _, gw := range gws {
		st.gateways = append(st.gateways, NetworkGatewaysOf(gw, cluster)...)
		w, diags := WaypointOf(gw, classes[string(gw.Spec.GatewayClassName)], network, cluster)
		st.diags = append(st.diags, diags...)
		if w != nil {
			st.waypoints[[2]string{gw.Namespace, gw.Name}] = w
		}
	}
	slices.SortFunc(st.diags, model.CompareDiagnostics)
	st.gateways = model.SortGateways(st.gateways)
	return st
}

// NetworkGatewaysOf returns the network gateways a Gateway is for Istio's
// ambient mode: a Gateway of class istio-remote labelled
// topology.istio.io/network is that network's gateway at each of its
// status addresses (IP or host name), on the port of its first HBONE
// listener; without one it is none. Its service account is the
// gateway.istio.io/service-account annotation, else
// "<name>-istio-remote", in its namespace.
func NetworkGatewaysOf(gw *gatewayv1.Gateway, cluster model.ClusterID) []model.NetworkGateway {
	network := gw.Labels["topology.istio.io/network"]
	if network == "" || gw.Spec.GatewayClassName != "istio-remote" {
		return nil
	}
	var port uint32
	for _, l := range gw.Spec.Listeners {
		if l.Protocol == "HBONE" {
			port = uint32(l.Port)
			break
		}
	}
	if port == 0 {
		return nil
	}
	sa := gw.Annotations["gateway.istio.io/service-account"]
	if sa == "" {
		sa = gw.Name + "-istio-remote"
	}
	var out []model.NetworkGateway
	for _, a := range gw.Status.Addresses {
		if a.Type == nil || (*a.Type != gatewayv1.IPAddressType && *a.Type != gatewayv1.HostnameAddressType) {
			continue
		}
		out = append(out, model.NetworkGateway{Network: model.NetworkID(network), Cluster: cluster, Address: a.Value,
			Port: port, HBONEPort: port, ServiceAccount: gw.Namespace + "/" + sa, Source: model.GatewayFromGateway})
	}
	return out
}

// Namespace implements Metadata.
func (m *StaticMetadata) Namespace(name string) *Namespace {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.state.namespaces[name]
}

// Waypoint implements Metadata.
func (m *StaticMetadata) Waypoint(namespace, name string) *Waypoint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.state.waypoints[[2]string{namespace, name}]
}

// NetworkGateways implements Metadata.
func (m *StaticMetadata) NetworkGateways() []model.NetworkGateway {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.state.gateways
}

// Diagnostics implements Metadata.
func (m *StaticMetadata) Diagnostics() []model.Diagnostic {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.state.diags
}

// Subscribe implements Metadata.
func (m *StaticMetadata) Subscribe(f func()) (unsubscribe func()) {
	m.mu.Lock()
	id := m.nextID
	m.nextID++
	m.listeners[id] = f
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.listeners, id)
		m.mu.Unlock()
	}
}

// HasSynced implements Metadata: always true.
func (m *StaticMetadata) HasSynced() bool { return true }
