package model

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"time"
)

// Port is a port a service exposes.
type Port struct {
	// Name is the port's name; unique within a service. It may be empty
	// for the single port of a Kubernetes Service.
	Name string
	// Port is the service port number, 1 to 65535.
	Port uint32
	// Protocol is the application protocol.
	Protocol Protocol
	// TargetPort is the numeric port endpoints listen on when the source
	// says so (a Kubernetes Service's numeric targetPort, a ServiceEntry
	// port's targetPort); 0 when unset or named.
	TargetPort uint32
	// TargetPortName is a Kubernetes Service's named targetPort, resolved
	// per workload; "" when the target port is numeric or unset.
	TargetPortName string
	// NodePort is a Kubernetes NodePort or LoadBalancer Service's node
	// port; 0 when none.
	NodePort uint32
	// Origin names the ServiceEntry a port comes from when it is not the
	// service's own (Service.Name): a port a younger entry of the host
	// declares, merged into the host's service (see package
	// serviceentry); "" for the service's own ports.
	Origin string
}

// ServiceKey identifies a service within a registry: a hostname in a
// namespace. Two namespaces may each declare the same hostname.
type ServiceKey struct {
	Namespace string
	Hostname  Hostname
}

// String returns "namespace/hostname".
func (k ServiceKey) String() string { return k.Namespace + "/" + string(k.Hostname) }

// Compare orders service keys by hostname, then namespace: the order in
// which registry.Discovery lists services and the dump writes them. It
// returns -1, 0 or +1 as k sorts before, with or after o.
func (k ServiceKey) Compare(o ServiceKey) int {
	if c := cmp.Compare(k.Hostname, o.Hostname); c != 0 {
		return c
	}
	return cmp.Compare(k.Namespace, o.Namespace)
}

// Service is a service of the mesh: a Kubernetes Service or a ServiceEntry
// host. Values are immutable once published (see the package doc).
type Service struct {
	// Hostname is the service's FQDN, or the ServiceEntry host.
	Hostname Hostname
	// Namespace and Name are the Kubernetes Service's or the
	// ServiceEntry's.
	Namespace, Name string
	// Provider is the kind of registry the service comes from.
	Provider Provider
	// Resolution says how clients reach the endpoints.
	Resolution Resolution
	// MeshExternal is true for ExternalName Services and MESH_EXTERNAL
	// ServiceEntries.
	MeshExternal bool
	// Ports in declaration order.
	Ports []Port
	// Addresses maps a cluster to the service's VIPs there. A VIP is a
	// single address (a /32 or /128 prefix) or, for ServiceEntries, a
	// CIDR range.
	Addresses map[ClusterID][]netip.Prefix
	// Clusters are the clusters that declare the service, sorted: a
	// registry's own cluster; in the aggregate, those of the versions
	// merged into it (a headless Service has no VIP to say so).
	Clusters []ClusterID
	// ExternalAddresses maps a cluster to the addresses that reach the
	// service from outside it: LoadBalancer ingress IPs and hostnames and
	// externalIPs.
	ExternalAddresses map[ClusterID][]string
	// AutoAddresses are the VIPs of a ServiceEntry host that declares
	// none: those the entry's status gives it, or that the registry
	// allocated.
	AutoAddresses []netip.Addr
	// ExportTo lists the namespaces that may see the service, sorted:
	// "*" (all, the meaning of an empty list), "." (its own), "~" (none)
	// or namespace names. It is carried exactly; consumers apply it.
	ExportTo []string
	// Visibility is a ServiceEntry's, as the mesh's
	// serviceEntryVisibility resolves it (serviceentry.Options); Public,
	// the zero value, for every other service. Consumers apply it.
	Visibility Visibility
	// Labels are the object's labels.
	Labels map[string]string
	// Annotations are the service's annotations that consumers read and
	// the registry does not convert (KeepAnnotations); nil when it has
	// none of them.
	Annotations map[string]string
	// Selector selects the workloads that back the service: a Kubernetes
	// Service's selector or a ServiceEntry's workloadSelector. Nil
	// selects nothing; an empty, non-nil map selects every workload of
	// the namespace.
	Selector map[string]string
	// ServiceAccounts are the SPIFFE identities the service's workloads
	// may run as, sorted.
	ServiceAccounts []string
	// ExternalName is the target of a Kubernetes ExternalName Service.
	ExternalName string
	// InternalTrafficPolicyLocal is true for Services with
	// internalTrafficPolicy: Local.
	InternalTrafficPolicyLocal bool
	// TrafficDistribution is where clients should prefer the service's
	// endpoints: TrafficPreferSameZone, TrafficPreferSameNode, or ""
	// for anywhere. It is read as Istio reads it (see
	// ParseTrafficDistribution): a Kubernetes Service's
	// spec.trafficDistribution, else its
	// networking.istio.io/traffic-distribution annotation, else its
	// namespace's; a ServiceEntry's annotation, else its namespace's.
	TrafficDistribution string
	// PublishNotReadyAddresses is the Service's field of that name:
	// endpoints are Healthy whatever their readiness.
	PublishNotReadyAddresses bool
	// IPFamilies are the families a Kubernetes Service's
	// spec.ipFamilies lists; zero when it lists none, and for
	// ServiceEntries.
	IPFamilies IPFamilies
	// CreationTime orders ServiceEntries for precedence.
	CreationTime time.Time
	// Exports are the clusters whose ServiceExport (Kubernetes
	// Multi-Cluster Services) exports the Service, with each export's
	// creation time; nil when none does, or when no registry reads
	// ServiceExports (see kube.MCSOptions).
	Exports map[ClusterID]time.Time
}

// IPFamilies is a set of IP families.
type IPFamilies uint8

// The IP families.
const (
	IPv4 IPFamilies = 1 << iota
	IPv6
)

// Key returns the service's namespace and hostname.
func (s *Service) Key() ServiceKey { return ServiceKey{Namespace: s.Namespace, Hostname: s.Hostname} }

// PortByName returns the port with the given name.
func (s *Service) PortByName(name string) (Port, bool) {
	for _, p := range s.Ports {
		if p.Name == name {
			return p, true
		}
	}
	return Port{}, false
}

// PortByNumber returns the port with the given number.
func (s *Service) PortByNumber(n uint32) (Port, bool) {
	for _, p := range s.Ports {
		if p.Port == n {
			return p, true
		}
	}
	return Port{}, false
}

// Equals reports whether s and o describe the same service. Nil equals
// only nil. Nil and empty slices and maps are equal.
func (s *Service) Equals(o *Service) bool {
	if s == o {
		return true // also nil and nil; values are immutable once shared
	}
	if s == nil || o == nil {
		return false
	}
	return s.Hostname == o.Hostname &&
		s.Namespace == o.Namespace &&
		s.Name == o.Name &&
		s.Provider == o.Provider &&
		s.Resolution == o.Resolution &&
		s.MeshExternal == o.MeshExternal &&
		slices.Equal(s.Ports, o.Ports) &&
		mapsEqualFunc(s.Addresses, o.Addresses, slices.Equal) &&
		slices.Equal(s.Clusters, o.Clusters) &&
		mapsEqualFunc(s.ExternalAddresses, o.ExternalAddresses, slices.Equal) &&
		slices.Equal(s.AutoAddresses, o.AutoAddresses) &&
		slices.Equal(s.ExportTo, o.ExportTo) &&
		s.Visibility == o.Visibility &&
		maps.Equal(s.Labels, o.Labels) &&
		maps.Equal(s.Annotations, o.Annotations) &&
		maps.Equal(s.Selector, o.Selector) && (s.Selector == nil) == (o.Selector == nil) &&
		slices.Equal(s.ServiceAccounts, o.ServiceAccounts) &&
		s.ExternalName == o.ExternalName &&
		s.InternalTrafficPolicyLocal == o.InternalTrafficPolicyLocal &&
		s.TrafficDistribution == o.TrafficDistribution &&
		s.PublishNotReadyAddresses == o.PublishNotReadyAddresses &&
		s.IPFamilies == o.IPFamilies &&
		s.CreationTime.Equal(o.CreationTime) &&
		mapsEqualFunc(s.Exports, o.Exports, time.Time.Equal)
}

// DeepCopy returns a copy of s that shares no memory with it.
func (s *Service) DeepCopy() *Service {
	if s == nil {
		return nil
	}
	out := *s
	out.Ports = slices.Clone(s.Ports)
	out.Addresses = cloneMapFunc(s.Addresses, slices.Clone)
	out.Clusters = slices.Clone(s.Clusters)
	out.ExternalAddresses = cloneMapFunc(s.ExternalAddresses, slices.Clone)
	out.AutoAddresses = slices.Clone(s.AutoAddresses)
	out.ExportTo = slices.Clone(s.ExportTo)
	out.Labels = maps.Clone(s.Labels)
	out.Annotations = maps.Clone(s.Annotations)
	out.Selector = maps.Clone(s.Selector)
	out.ServiceAccounts = slices.Clone(s.ServiceAccounts)
	out.Exports = maps.Clone(s.Exports)
	return &out
}

func mapsEqualFunc[K comparable, V any](a, b map[K]V, eq func(V, V) bool) bool {
	return maps.EqualFunc(a, b, eq)
}

func cloneMapFunc[K comparable, V any](m map[K]V, clone func(V) V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = clone(v)
	}
	return out
}
