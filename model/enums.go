package model

import "fmt"

// Hostname is a fully qualified service host name, such as
// "reviews.default.svc.cluster.local" or the host of a ServiceEntry. A
// ServiceEntry host may be a wildcard such as "*.example.com".
type Hostname string

// IsWildcard reports whether h is a wildcard host ("*" or "*.suffix").
func (h Hostname) IsWildcard() bool { return len(h) > 0 && h[0] == '*' }

// ClusterID names the cluster a registry, service address or endpoint
// belongs to.
type ClusterID string

// NetworkID names a network: endpoints on the same network reach each other
// directly, others through a gateway.
type NetworkID string

// Provider says which kind of registry a service or endpoint comes from.
type Provider uint8

// Providers. The zero value is not a valid provider.
const (
	// Kubernetes: Services, EndpointSlices and Pods of a cluster.
	Kubernetes Provider = iota + 1
	// External: Istio ServiceEntries and WorkloadEntries.
	External
)

// String returns "Kubernetes" or "External".
func (p Provider) String() string {
	switch p {
	case Kubernetes:
		return "Kubernetes"
	case External:
		return "External"
	}
	return fmt.Sprintf("Provider(%d)", uint8(p))
}

// Resolution says how a client reaches a service's endpoints.
type Resolution uint8

// Resolutions. The zero value is ClientSideLB.
const (
	// ClientSideLB: the client picks among the service's endpoints.
	ClientSideLB Resolution = iota
	// DNS: each endpoint address is a DNS name the client resolves, and
	// all resolved addresses are used.
	DNS
	// DNSRoundRobin: a single DNS name whose answers the client rotates
	// through; the registry keeps one endpoint.
	DNSRoundRobin
	// Passthrough: the client connects to the address it asked for
	// (headless Services, ServiceEntries with resolution NONE).
	Passthrough
	// Alias: the service is another name for ExternalName (Kubernetes
	// ExternalName services).
	Alias
	// DynamicDNS: the client resolves the host it asked for, which
	// matches the service's wildcard host, when it connects
	// (ServiceEntries with resolution DYNAMIC_DNS; no endpoints).
	DynamicDNS
)

// String returns the dump word: ClientSideLB, DNS, DNSRoundRobin,
// Passthrough, Alias or DynamicDNS.
func (r Resolution) String() string {
	switch r {
	case ClientSideLB:
		return "ClientSideLB"
	case DNS:
		return "DNS"
	case DNSRoundRobin:
		return "DNSRoundRobin"
	case Passthrough:
		return "Passthrough"
	case Alias:
		return "Alias"
	case DynamicDNS:
		return "DynamicDNS"
	}
	return fmt.Sprintf("Resolution(%d)", uint8(r))
}

// HealthStatus is an endpoint's health.
type HealthStatus uint8

// Health states. The zero value is Healthy.
const (
	// Healthy endpoints receive traffic.
	Healthy HealthStatus = iota
	// Unhealthy endpoints exist but are not ready.
	Unhealthy
	// Draining endpoints are terminating but still serving: they finish
	// the connections they have and get no new ones.
	Draining
	// Terminating endpoints are going away and no longer serving.
	Terminating
)

// String returns Healthy, Unhealthy, Draining or Terminating.
func (h HealthStatus) String() string {
	switch h {
	case Healthy:
		return "Healthy"
	case Unhealthy:
		return "Unhealthy"
	case Draining:
		return "Draining"
	case Terminating:
		return "Terminating"
	}
	return fmt.Sprintf("HealthStatus(%d)", uint8(h))
}

// TLSMode says whether an endpoint accepts Istio mutual TLS.
type TLSMode uint8

// TLS modes. The zero value is TLSDisabled.
const (
	// TLSDisabled: plain traffic.
	TLSDisabled TLSMode = iota
	// TLSIstio: the endpoint has a sidecar or ztunnel that accepts Istio
	// mutual TLS.
	TLSIstio
)

// String returns "disabled" or "istio", the values of the
// security.istio.io/tlsMode label.
func (m TLSMode) String() string {
	switch m {
	case TLSDisabled:
		return "disabled"
	case TLSIstio:
		return "istio"
	}
	return fmt.Sprintf("TLSMode(%d)", uint8(m))
}

// ParseTLSMode reads the value of the security.istio.io/tlsMode label.
// Anything but "istio" is TLSDisabled.
func ParseTLSMode(label string) TLSMode {
	if label == "istio" {
		return TLSIstio
	}
	return TLSDisabled
}

// EventType says what happened to an object.
type EventType uint8

// Event types.
const (
	EventAdd EventType = iota + 1
	EventUpdate
	EventDelete
)

// String returns "add", "update" or "delete".
func (e EventType) String() string {
	switch e {
	case EventAdd:
		return "add"
	case EventUpdate:
		return "update"
	case EventDelete:
		return "delete"
	}
	return fmt.Sprintf("EventType(%d)", uint8(e))
}

// WorkloadKind says what a workload instance was made from.
type WorkloadKind uint8

// Workload kinds.
const (
	KindPod WorkloadKind = iota + 1
	KindWorkloadEntry
)

// String returns "Pod" or "WorkloadEntry".
func (k WorkloadKind) String() string {
	switch k {
	case KindPod:
		return "Pod"
	case KindWorkloadEntry:
		return "WorkloadEntry"
	}
	return fmt.Sprintf("WorkloadKind(%d)", uint8(k))
}

// Severity grades a diagnostic.
type Severity uint8

// Severities.
const (
	// Warning: the object was used, perhaps in part.
	Warning Severity = iota + 1
	// Error: the object, or the part of it named, was not used.
	Error
)

// String returns "Warning" or "Error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "Warning"
	case Error:
		return "Error"
	}
	return fmt.Sprintf("Severity(%d)", uint8(s))
}
