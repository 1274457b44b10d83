package memory

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/meshreg/meshreg/model"
)

// The builders make model values for tests in a line each. Every method
// returns the builder, and Build returns a new value each time it is
// called, so a builder can serve as a template. Builders leave the
// cluster empty unless told: a Registry fills in its own (see the package
// doc).

// ServiceBuilder builds a *model.Service. Start one with Service.
type ServiceBuilder struct {
	svc     model.Service
	cluster model.ClusterID
	err     error
}

// Service starts a Kubernetes Service with the hostname
// name.namespace.svc.cluster.local, no ports and no VIP.
func Service(name, namespace string) *ServiceBuilder {
	return &ServiceBuilder{svc: model.Service{
		Hostname:  model.KubeServiceHostname(name, namespace, model.DefaultDomainSuffix),
		Namespace: namespace,
		Name:      name,
		Provider:  model.Kubernetes,
	}}
}

// ServiceEntry starts an External service for a ServiceEntry host, named
// after the host, with resolution DNS and no ports.
func ServiceEntry(host, namespace string) *ServiceBuilder {
	return &ServiceBuilder{svc: model.Service{
		Hostname:   model.Hostname(host),
		Namespace:  namespace,
		Name:       host,
		Provider:   model.External,
		Resolution: model.DNS,
	}}
}

// Hostname replaces the hostname.
func (b *ServiceBuilder) Hostname(h string) *ServiceBuilder {
	b.svc.Hostname = model.Hostname(h)
	return b
}

// Name replaces the object name.
func (b *ServiceBuilder) Name(name string) *ServiceBuilder {
	b.svc.Name = name
	return b
}

// Port adds a port, its protocol detected from its name as for a
// Kubernetes Service port ("http" and "http-web" are HTTP, "grpc" is GRPC,
// an unknown name is UnsupportedProtocol).
func (b *ServiceBuilder) Port(name string, port uint32) *ServiceBuilder {
	return b.PortWith(model.Port{Name: name, Port: port, Protocol: model.DetectProtocol(port, name, "", false)})
}

// PortWith adds a port given in full.
func (b *ServiceBuilder) PortWith(p model.Port) *ServiceBuilder {
	b.svc.Ports = append(b.svc.Ports, p)
	return b
}

// Cluster sets the cluster that later VIP calls place addresses in.
func (b *ServiceBuilder) Cluster(c model.ClusterID) *ServiceBuilder {
	b.cluster = c
	return b
}

// VIP adds virtual IPs: addresses ("10.96.0.10") or, for ServiceEntries,
// CIDR ranges ("10.0.0.0/16"). Build panics if one is neither.
func (b *ServiceBuilder) VIP(addrs ...string) *ServiceBuilder {
	for _, a := range addrs {
		p, err := parseVIP(a)
		if err != nil {
			if b.err == nil {
				b.err = fmt.Errorf("memory: service %s/%s: VIP %q: %w", b.svc.Namespace, b.svc.Name, a, err)
			}
			continue
		}
		if b.svc.Addresses == nil {
			b.svc.Addresses = map[model.ClusterID][]netip.Prefix{}
		}
		b.svc.Addresses[b.cluster] = append(b.svc.Addresses[b.cluster], p)
	}
	return b
}

func parseVIP(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("neither an IP address nor a CIDR range")
	}
	return p, nil
}

// Resolution sets how clients reach the endpoints.
func (b *ServiceBuilder) Resolution(r model.Resolution) *ServiceBuilder {
	b.svc.Resolution = r
	return b
}

// MeshExternal marks the service as outside the mesh.
func (b *ServiceBuilder) MeshExternal() *ServiceBuilder {
	b.svc.MeshExternal = true
	return b
}

// ExternalName makes the service a Kubernetes ExternalName Service: an
// alias of name, outside the mesh.
func (b *ServiceBuilder) ExternalName(name string) *ServiceBuilder {
	b.svc.ExternalName = name
	b.svc.Resolution = model.Alias
	b.svc.MeshExternal = true
	return b
}

// ExportTo sets the namespaces that may see the service ("*", ".", "~" or
// names); they are stored sorted.
func (b *ServiceBuilder) ExportTo(namespaces ...string) *ServiceBuilder {
	b.svc.ExportTo = slices.Sorted(slices.Values(namespaces))
	return b
}

// Labels sets the service's labels (copied).
func (b *ServiceBuilder) Labels(labels map[string]string) *ServiceBuilder {
	b.svc.Labels = maps.Clone(labels)
	return b
}

// Selector sets the workload selector (copied). A service built without
// calling Selector selects nothing; Selector(nil) and an empty map select
// every workload of the service's namespace.
func (b *ServiceBuilder) Selector(selector map[string]string) *ServiceBuilder {
	b.svc.Selector = maps.Clone(selector)
	if b.svc.Selector == nil {
		b.svc.Selector = map[string]string{}
	}
	return b
}

// ServiceAccounts sets the identities the service's workloads run as;
// they are stored sorted.
func (b *ServiceBuilder) ServiceAccounts(ids ...string) *ServiceBuilder {
	b.svc.ServiceAccounts = slices.Sorted(slices.Values(ids))
	return b
}

// CreatedAt sets the creation time, which orders ServiceEntries of one
// hostname for precedence.
func (b *ServiceBuilder) CreatedAt(t time.Time) *ServiceBuilder {
	b.svc.CreationTime = t
	return b
}

// Build returns the service. It panics, naming the service and the
// value, when a VIP was not an address or a range: builders are for
// literals in tests, where a typo should stop the test at once, as
// netip.MustParseAddr does.
func (b *ServiceBuilder) Build() *model.Service {
	if b.err != nil {
		panic(b.err)
	}
	return b.svc.DeepCopy()
}

// EndpointBuilder builds a *model.Endpoint. Start one with Endpoint.
type EndpointBuilder struct {
	ep model.Endpoint
}

// Endpoint starts a healthy, serving endpoint at address and port (the port the
// workload listens on). An address that is not an IP is a hostname, as
// for the endpoints of DNS ServiceEntries. The service port it serves is
// unnamed until Port says otherwise.
func Endpoint(address string, port uint32) *EndpointBuilder {
	b := &EndpointBuilder{ep: model.Endpoint{Port: port, Serving: true}}
	setAddress(&b.ep, address)
	return b
}

func setAddress(ep *model.Endpoint, address string) {
	if a, err := netip.ParseAddr(address); err == nil {
		ep.Addresses = append(ep.Addresses, a)
	} else {
		ep.Hostname = address
	}
}

// Port names the service port the endpoint serves.
func (b *EndpointBuilder) Port(servicePortName string) *EndpointBuilder {
	b.ep.ServicePortName = servicePortName
	return b
}

// AlsoAddress adds an address after the primary one, as a dual-stack
// workload has (IPv4 first).
func (b *EndpointBuilder) AlsoAddress(address string) *EndpointBuilder {
	setAddress(&b.ep, address)
	return b
}

// Labels sets the endpoint's labels (copied).
func (b *EndpointBuilder) Labels(labels map[string]string) *EndpointBuilder {
	b.ep.Labels = maps.Clone(labels)
	return b
}

// Cluster sets the endpoint's cluster.
func (b *EndpointBuilder) Cluster(c model.ClusterID) *EndpointBuilder {
	b.ep.Cluster = c
	return b
}

// Network sets the endpoint's network.
func (b *EndpointBuilder) Network(n model.NetworkID) *EndpointBuilder {
	b.ep.Network = n
	return b
}

// Locality sets the locality from "region/zone/subzone" (see
// model.ParseLocality).
func (b *EndpointBuilder) Locality(l string) *EndpointBuilder {
	b.ep.Locality = model.ParseLocality(l)
	return b
}

// ServiceAccount sets the SPIFFE identity.
func (b *EndpointBuilder) ServiceAccount(id string) *EndpointBuilder {
	b.ep.ServiceAccount = id
	return b
}

// IstioTLS marks the endpoint as accepting Istio mutual TLS.
func (b *EndpointBuilder) IstioTLS() *EndpointBuilder {
	b.ep.TLSMode = model.TLSIstio
	return b
}

// Health sets the health (default Healthy), and Serving to whether h is
// Healthy or Draining; call Serving after it to say otherwise.
//
// The kube registry decides health from an EndpointSlice endpoint's
// conditions (Istio's rule): ready, or ready unset, is Healthy; not
// ready and terminating is Terminating (Draining when its Service
// drains and it still serves); not ready and not terminating is
// Unhealthy; and not ready with terminating unset is Terminating too, as
// Istio counts it. A consumer such as proxyview drops a Terminating
// endpoint (no proxy is sent it) but sends an Unhealthy one as
// unhealthy. So for a pod that is merely not ready, use
// Health(model.Unhealthy) here, and write terminating: false beside
// ready: false in a slice given to the kube registry or a fixture.
func (b *EndpointBuilder) Health(h model.HealthStatus) *EndpointBuilder {
	b.ep.Health = h
	b.ep.Serving = h == model.Healthy || h == model.Draining
	return b
}

// Serving sets whether the endpoint serves (default true; see
// model.Endpoint.Serving).
func (b *EndpointBuilder) Serving(serving bool) *EndpointBuilder {
	b.ep.Serving = serving
	return b
}

// Weight sets the load-balancing weight.
func (b *EndpointBuilder) Weight(w uint32) *EndpointBuilder {
	b.ep.Weight = w
	return b
}

// Node sets the Kubernetes node the endpoint's pod runs on.
func (b *EndpointBuilder) Node(name string) *EndpointBuilder {
	b.ep.NodeName = name
	return b
}

// Pod names the Pod behind the endpoint.
func (b *EndpointBuilder) Pod(namespace, name string) *EndpointBuilder {
	b.ep.WorkloadKind, b.ep.WorkloadNamespace, b.ep.WorkloadName = model.KindPod, namespace, name
	return b
}

// WorkloadEntry names the WorkloadEntry behind the endpoint.
func (b *EndpointBuilder) WorkloadEntry(namespace, name string) *EndpointBuilder {
	b.ep.WorkloadKind, b.ep.WorkloadNamespace, b.ep.WorkloadName = model.KindWorkloadEntry, namespace, name
	return b
}

// Build returns the endpoint.
func (b *EndpointBuilder) Build() *model.Endpoint { return b.ep.DeepCopy() }

// WorkloadBuilder builds a *model.WorkloadInstance. Start one with
// Workload.
type WorkloadBuilder struct {
	w model.WorkloadInstance
}

// Workload starts a Pod with the given name and namespace and no address.
func Workload(name, namespace string) *WorkloadBuilder {
	return &WorkloadBuilder{w: model.WorkloadInstance{Kind: model.KindPod, Namespace: namespace, Name: name}}
}

// WorkloadEntry makes the workload a WorkloadEntry rather than a Pod.
func (b *WorkloadBuilder) WorkloadEntry() *WorkloadBuilder {
	b.w.Kind = model.KindWorkloadEntry
	return b
}

// Address adds addresses, primary first. An address that is not an IP is
// a hostname (a DNS-addressed WorkloadEntry).
func (b *WorkloadBuilder) Address(addresses ...string) *WorkloadBuilder {
	for _, a := range addresses {
		setAddress(&b.w.Endpoint, a)
	}
	return b
}

// Labels sets the workload's labels (copied).
func (b *WorkloadBuilder) Labels(labels map[string]string) *WorkloadBuilder {
	b.w.Endpoint.Labels = maps.Clone(labels)
	return b
}

// NamedPort maps a port name to the number the workload listens on.
func (b *WorkloadBuilder) NamedPort(name string, port uint32) *WorkloadBuilder {
	if b.w.PortMap == nil {
		b.w.PortMap = map[string]uint32{}
	}
	b.w.PortMap[name] = port
	return b
}

// Cluster sets the workload's cluster.
func (b *WorkloadBuilder) Cluster(c model.ClusterID) *WorkloadBuilder {
	b.w.Endpoint.Cluster = c
	return b
}

// Network sets the workload's network.
func (b *WorkloadBuilder) Network(n model.NetworkID) *WorkloadBuilder {
	b.w.Endpoint.Network = n
	return b
}

// Locality sets the locality from "region/zone/subzone".
func (b *WorkloadBuilder) Locality(l string) *WorkloadBuilder {
	b.w.Endpoint.Locality = model.ParseLocality(l)
	return b
}

// ServiceAccount sets the SPIFFE identity.
func (b *WorkloadBuilder) ServiceAccount(id string) *WorkloadBuilder {
	b.w.Endpoint.ServiceAccount = id
	return b
}

// IstioTLS marks the workload as accepting Istio mutual TLS.
func (b *WorkloadBuilder) IstioTLS() *WorkloadBuilder {
	b.w.Endpoint.TLSMode = model.TLSIstio
	return b
}

// Health sets the workload's health (default Healthy), and its Serving
// to whether h is Healthy or Draining, as EndpointBuilder.Health does. A
// workload's health is its own, not its endpoints': the address index
// (ambient mode) takes a pod's status from it, so that
// Health(model.Unhealthy) on a workload added again is an UNHEALTHY
// workload to ztunnel, whatever SetEndpoints says of the services it
// backs. (A kube registry's pod is Unhealthy while it does not serve:
// not Ready, or being deleted.)
func (b *WorkloadBuilder) Health(h model.HealthStatus) *WorkloadBuilder {
	b.w.Endpoint.Health = h
	b.w.Endpoint.Serving = h == model.Healthy || h == model.Draining
	return b
}

// Build returns the workload instance.
func (b *WorkloadBuilder) Build() *model.WorkloadInstance {
	w := b.w.DeepCopy()
	w.Endpoint.WorkloadKind, w.Endpoint.WorkloadNamespace, w.Endpoint.WorkloadName = w.Kind, w.Namespace, w.Name
	return w
}
