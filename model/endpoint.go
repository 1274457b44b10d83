package model

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Endpoint is one workload address serving one port of one service. A pod
// that serves two ports of a service is two endpoints, one per port.
//
// An endpoint is addressed either by IP (Addresses, dual-stack workloads
// carrying one address per family, IPv4 first) or, for DNS ServiceEntries,
// by Hostname, a DNS name or a "unix://" socket path; never both.
type Endpoint struct {
	// Addresses are the endpoint's IPs, primary first; empty when
	// Hostname is set.
	Addresses []netip.Addr
	// Hostname is a DNS name or unix:// path for endpoints not addressed
	// by IP; "" otherwise.
	Hostname string
	// Port is the port the workload listens on (the target port).
	Port uint32
	// Weight is the load-balancing weight; 0 when unset.
	Weight uint32
	// ServicePortName is the name of the service port served.
	ServicePortName string
	// Labels are the workload's labels, with the topology labels the
	// registry adds.
	Labels map[string]string
	// Hints are the endpoint's topology hints (an EndpointSlice
	// endpoint's hints.forZones and hints.forNodes): the zones and nodes
	// whose clients it should serve. Nil when there are none, and for a
	// kind of hint that one Healthy endpoint of the service lacks:
	// Kubernetes uses hints all or nothing, and so does the registry.
	// Shared between endpoints; never modified.
	Hints *Hints
	// Locality, Network and Cluster place the endpoint.
	Locality Locality
	Network  NetworkID
	Cluster  ClusterID
	// ServiceAccount is the workload's SPIFFE identity; "" when none.
	ServiceAccount string
	// NodeName is the Kubernetes node the pod runs on; "" otherwise.
	NodeName string
	// PodHostname and PodSubdomain are the DNS names of a pod in a
	// headless Service (StatefulSet pods): when the pod's spec.subdomain
	// is set, its spec.hostname (else the pod's name) and that subdomain;
	// "" otherwise, and for endpoints that are not pods.
	PodHostname, PodSubdomain string
	// TLSMode says whether the workload accepts Istio mutual TLS.
	TLSMode TLSMode
	// Health is the endpoint's health.
	Health HealthStatus
	// Serving reports whether the endpoint can serve traffic: for an
	// EndpointSlice endpoint its serving condition (unset: its ready
	// condition, as the API defines it), so that a consumer can keep a
	// terminating endpoint that still serves; for any other endpoint,
	// whether it is Healthy.
	Serving bool
	// Discoverability says which proxies may be sent the endpoint:
	// AlwaysDiscoverable (the zero value) unless the Kubernetes
	// Multi-Cluster Services options confine it to its own cluster.
	Discoverability Discoverability
	// WorkloadKind, WorkloadNamespace and WorkloadName name the Pod or
	// WorkloadEntry behind the endpoint; zero when unknown.
	WorkloadKind      WorkloadKind
	WorkloadNamespace string
	WorkloadName      string
	// Origin names the object an endpoint that no workload backs comes
	// from, which Istio's ambient index names it by: the EndpointSlice of
	// a Kubernetes endpoint whose slice names no Pod (no Pod targetRef),
	// the ServiceEntry of an entry's own endpoint (spec.endpoints, or its
	// host for a DNS entry without endpoints). "" for every other
	// endpoint.
	Origin string
}

// Address returns the primary address as text: the first IP, or the
// hostname.
func (e *Endpoint) Address() string {
	if len(e.Addresses) > 0 {
		return e.Addresses[0].String()
	}
	return e.Hostname
}

// AddressStrings returns every address as text, primary first.
func (e *Endpoint) AddressStrings() []string {
	if len(e.Addresses) == 0 {
		if e.Hostname == "" {
			return []string{}
		}
		return []string{e.Hostname}
	}
	out := make([]string, len(e.Addresses))
	for i, a := range e.Addresses {
		out[i] = a.String()
	}
	return out
}

// Workload returns "namespace/name" of the workload behind the endpoint,
// or "" when unknown.
func (e *Endpoint) Workload() string {
	if e.WorkloadName == "" {
		return ""
	}
	return e.WorkloadNamespace + "/" + e.WorkloadName
}

// EndpointKey is an endpoint's place within one service and shard: its
// service port, primary address and port. Two workloads at one address
// (host-network pods) may share it, so it names a place, not always one
// endpoint.
type EndpointKey struct {
	ServicePort string
	Address     string
	Port        uint32
}

// String returns "servicePort/address:port".
func (k EndpointKey) String() string {
	return k.ServicePort + "/" + k.Address + ":" + strconv.FormatUint(uint64(k.Port), 10)
}

// Key returns the endpoint's place within its service and shard: the
// service port, the primary address and the port.
func (e *Endpoint) Key() EndpointKey {
	return EndpointKey{ServicePort: e.ServicePortName, Address: e.Address(), Port: e.Port}
}

// Equals reports whether e and o are the same endpoint in every field. Nil
// equals only nil.
func (e *Endpoint) Equals(o *Endpoint) bool {
	if e == o {
		return true // also nil and nil; values are immutable once shared
	}
	if e == nil || o == nil {
		return false
	}
	return slices.Equal(e.Addresses, o.Addresses) &&
		e.Hostname == o.Hostname &&
		e.Port == o.Port &&
		e.ServicePortName == o.ServicePortName &&
		maps.Equal(e.Labels, o.Labels) &&
		e.Locality == o.Locality &&
		e.Network == o.Network &&
		e.Cluster == o.Cluster &&
		e.ServiceAccount == o.ServiceAccount &&
		e.TLSMode == o.TLSMode &&
		e.Health == o.Health &&
		e.Discoverability == o.Discoverability &&
		e.Weight == o.Weight &&
		e.NodeName == o.NodeName &&
		e.PodHostname == o.PodHostname &&
		e.PodSubdomain == o.PodSubdomain &&
		e.Hints.Equals(o.Hints) &&
		e.Serving == o.Serving &&
		e.WorkloadKind == o.WorkloadKind &&
		e.WorkloadNamespace == o.WorkloadNamespace &&
		e.WorkloadName == o.WorkloadName && e.Origin == o.Origin
}

// DeepCopy returns a copy of e that shares no memory with it.
func (e *Endpoint) DeepCopy() *Endpoint {
	if e == nil {
		return nil
	}
	out := *e
	out.Addresses = slices.Clone(e.Addresses)
	out.Labels = maps.Clone(e.Labels)
	out.Hints = e.Hints.DeepCopy()
	return &out
}

// Hints are an endpoint's topology hints, each list sorted and without
// duplicates.
type Hints struct {
	// ForZones are the zones whose clients the endpoint should serve.
	ForZones []string
	// ForNodes are the nodes whose clients the endpoint should serve.
	ForNodes []string
}

// Equals reports whether h and o hold the same hints. Nil equals only
// nil: the registry gives an endpoint without hints none.
func (h *Hints) Equals(o *Hints) bool {
	if h == nil || o == nil {
		return h == o
	}
	return slices.Equal(h.ForZones, o.ForZones) && slices.Equal(h.ForNodes, o.ForNodes)
}

// IsZero reports whether h holds no hint.
func (h *Hints) IsZero() bool { return h == nil || len(h.ForZones) == 0 && len(h.ForNodes) == 0 }

// DeepCopy returns a copy of h that shares no memory with it.
func (h *Hints) DeepCopy() *Hints {
	if h == nil {
		return nil
	}
	return &Hints{ForZones: slices.Clone(h.ForZones), ForNodes: slices.Clone(h.ForNodes)}
}

// EndpointsEqual reports whether two endpoint lists hold equal endpoints
// in the same order.
func EndpointsEqual(a, b []*Endpoint) bool {
	return slices.EqualFunc(a, b, (*Endpoint).Equals)
}

// CompareEndpoints orders endpoints as the dump does: by service port,
// cluster, primary address and port. It returns a negative number when a
// sorts first, a positive one when b does, and 0 when they tie.
func CompareEndpoints(a, b *Endpoint) int {
	if c := strings.Compare(a.ServicePortName, b.ServicePortName); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Cluster), string(b.Cluster)); c != 0 {
		return c
	}
	if c := compareAddress(a, b); c != 0 {
		return c
	}
	switch {
	case a.Port < b.Port:
		return -1
	case a.Port > b.Port:
		return 1
	}
	return 0
}

// compareAddress orders IP-addressed endpoints by IP (numerically, IPv4
// first) before hostname-addressed ones, which sort by name.
func compareAddress(a, b *Endpoint) int {
	switch {
	case len(a.Addresses) > 0 && len(b.Addresses) > 0:
		return a.Addresses[0].Compare(b.Addresses[0])
	case len(a.Addresses) > 0:
		return -1
	case len(b.Addresses) > 0:
		return 1
	}
	return strings.Compare(a.Hostname, b.Hostname)
}
