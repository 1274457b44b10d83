package proxyview

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
)

// Proxy is a proxy (an Envoy sidecar, a proxyless gRPC client, a gateway)
// as the view knows it: where it runs and what it is. Build it from the
// proxy's own data (examples/xds-server builds it from the xDS node's
// metadata); the view never sees an xDS type.
//
// A Proxy passed to a query must not be modified while the query runs.
type Proxy struct {
	// Namespace is the proxy's namespace: it decides which services the
	// proxy sees (exportTo) and which it may serve (Inbound).
	Namespace string
	// Cluster is the cluster the proxy runs in: it picks a service's VIPs
	// and the endpoints of cluster-local services. "" means unknown.
	Cluster model.ClusterID
	// Network is the proxy's network: endpoints on other networks are
	// reached through those networks' gateways. "" means unknown.
	Network model.NetworkID
	// IPs are the proxy's addresses, primary first. They give its IP
	// families (IPFamilies) and its inbound targets.
	IPs []netip.Addr
	// Labels are the proxy's workload labels.
	Labels map[string]string
	// Locality is where the proxy runs.
	Locality model.Locality
	// NodeName is the Kubernetes node the proxy runs on: Services with
	// internalTrafficPolicy Local send it the endpoints of its node only.
	NodeName string
	// DNSCapture is true when the proxy captures DNS (Istio's
	// ISTIO_META_DNS_CAPTURE): only then does it use the VIPs allocated
	// to ServiceEntries that declare none.
	DNSCapture bool
}

// IPFamilies says which IP families a proxy can use.
type IPFamilies uint8

// The IP families of a proxy.
const (
	IPv4 IPFamilies = 1 << iota
	IPv6
	// DualStack is both families.
	DualStack = IPv4 | IPv6
)

// String returns "IPv4", "IPv6" or "DualStack".
func (f IPFamilies) String() string {
	switch f {
	case IPv4:
		return "IPv4"
	case IPv6:
		return "IPv6"
	case DualStack:
		return "DualStack"
	}
	return "none"
}

// IPFamilies returns the families of the proxy's IPs: IPv4 when every IP
// is IPv4 (or IPv4-mapped), IPv6 when every IP is IPv6, DualStack when
// both appear. A proxy without IPs counts as IPv4, as Istio counts it.
func (p *Proxy) IPFamilies() IPFamilies {
	var f IPFamilies
	for _, ip := range p.IPs {
		if ip.Unmap().Is4() {
			f |= IPv4
		} else if ip.Is6() {
			f |= IPv6
		}
	}
	if f == 0 {
		return IPv4
	}
	return f
}

// inNetwork reports whether n is the proxy's network: the same, or either
// unknown (Istio's rule).
func (p *Proxy) inNetwork(n model.NetworkID) bool {
	return n == "" || p.Network == "" || n == p.Network
}

// has reports whether a is of one of the families.
func (f IPFamilies) has(a netip.Addr) bool {
	if a.Unmap().Is4() {
		return f&IPv4 != 0
	}
	return f&IPv6 != 0
}
