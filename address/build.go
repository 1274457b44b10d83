package address

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// builder turns the registry's values into the index's messages. It
// reads the metadata and the services of a namespace, and holds nothing.
type builder struct {
	opts Options
	meta *meta
	// config is the config cluster (see Index.configCluster); scope
	// says which clusters and networks the index holds.
	config model.ClusterID
	scope  scope
	// services returns the services of a namespace.
	services func(ns string) map[model.ServiceKey]*model.Service
	// named returns the selectorless Services whose slices name a pod
	// (targetRef), in no order.
	named func(model.WorkloadKey) []*model.Service
	// gateway returns the network gateway of a network for its
	// workloads, nil when none.
	gateway func(model.NetworkID) *workloadapi.GatewayAddress
	// shared holds the services maps and localities built so far, by
	// content, so that the workloads of one batch share equal ones (the
	// pods of a deployment have the same): messages are never modified
	// once built.
	sharedServices   map[string]map[string]*workloadapi.PortList
	sharedLocalities map[model.Locality]*workloadapi.Locality
}

// Labels and values the builder reads.
const (
	labelTunnel             = "networking.istio.io/tunnel"
	labelCanonicalName      = "service.istio.io/canonical-name"
	labelCanonicalRevision  = "service.istio.io/canonical-revision"
	clusterLocalTrustDomain = "cluster.local"
)

// Resource keys of workloads, as Istio writes them.
func podUID(c model.ClusterID, ns, name string) string { return string(c) + "//Pod/" + ns + "/" + name }
func entryUID(c model.ClusterID, ns, name string) string {
	return string(c) + "/networking.istio.io/WorkloadEntry/" + ns + "/" + name
}
func serviceEntryUID(c model.ClusterID, ns, name, addr string) string {
	return string(c) + "/networking.istio.io/ServiceEntry/" + ns + "/" + name + "/" + addr
}
func gatewayUID(g model.NetworkGateway) string {
	return "NetworkGateway/" + string(g.Network) + "/" + g.Address + "/" + uitoa(g.HBONEPort)
}

// serviceKey is a service's resource key, "namespace/hostname".
func serviceKey(ns, host string) string { return ns + "/" + host }

// network is a workload's network: its endpoint's, else its cluster's
// (a WorkloadEntry or ServiceEntry endpoint that names none is on the
// network of the cluster it belongs to, as Istio's ambient index has it).
func (b *builder) network(ep *model.Endpoint) model.NetworkID {
	if ep.Network != "" {
		return ep.Network
	}
	return b.meta.network(ep.Cluster)
}

// trustDomain is the trust domain a workload names: "" for cluster.local.
func (b *builder) trustDomain() string {
	if b.opts.TrustDomain == clusterLocalTrustDomain {
		return ""
	}
	return b.opts.TrustDomain
}

// serviceAccountName returns the service account of a SPIFFE identity.
func serviceAccountName(identity string) string {
	if i := strings.LastIndex(identity, "/sa/"); i >= 0 {
		return identity[i+len("/sa/"):]
	}
	return identity
}

// workload builds the workload of a Pod or WorkloadEntry instance.
func (b *builder) workload(w *model.WorkloadInstance) (*workloadapi.Workload, string) {
	ep := &w.Endpoint
	labels := ep.Labels
	network := b.network(ep)
	out := &workloadapi.Workload{
		Name:           w.Name,
		Namespace:      w.Namespace,
		Network:        string(network),
		NetworkGateway: b.gateway(network),
		ClusterId:      string(ep.Cluster),
		ServiceAccount: serviceAccountName(ep.ServiceAccount),
		Status:         workloadapi.WorkloadStatus_HEALTHY,
		TrustDomain:    b.trustDomain(),
		Locality:       b.locality(ep.Locality),
		WorkloadName:   cmp.Or(w.WorkloadName, w.Name),
		WorkloadType:   workloadapi.WorkloadType_POD,
	}
	for _, a := range ep.Addresses {
		out.Addresses = append(out.Addresses, a.AsSlice())
	}
	wp, problem := workloadWaypoint(b.meta, ep.Cluster, w.Namespace, labels)
	if wp != nil {
		out.Waypoint = wp.Address
	}
	if inst := instanceOf(b.meta, ep.Cluster, w.Namespace, labels); inst != nil && inst.Binding != nil {
		out.ApplicationTunnel = inst.Binding
	}
	svcs := b.selecting(w)
	switch w.Kind {
	case model.KindPod:
		out.Uid = podUID(ep.Cluster, w.Namespace, w.Name)
		out.Node = ep.NodeName
		if ep.Health != model.Healthy {
			out.Status = workloadapi.WorkloadStatus_UNHEALTHY
		}
		if w.HostNetwork {
			out.NetworkMode = workloadapi.NetworkMode_HOST_NETWORK
		}
		out.Services = b.share(podServices(w, svcs))
	default:
		out.Uid = entryUID(ep.Cluster, w.Namespace, w.Name)
		if len(ep.Addresses) == 0 {
			out.Hostname = ep.Hostname
		}
		if ep.Weight > 0 {
			out.Capacity = wrapperspb.UInt32(ep.Weight)
		}
		out.Services = b.share(entryServices(w.PortMap, svcs))
	}
	out.CanonicalName, out.CanonicalRevision = canonical(labels, out.WorkloadName)
	setTunnel(out, labels, w.Redirected)
	return out, problem
}

// selecting returns the services of the workload's namespace whose
// non-empty selector matches its labels (Kubernetes Services and
// ServiceEntries) and, for a pod, the Kubernetes Services whose slices
// name it (by targetRef), as Istio's index has them, each a service that
// may select a workload of its cluster (scope.selects), sorted by
// hostname.
func (b *builder) selecting(w *model.WorkloadInstance) []*model.Service {
	var out []*model.Service
	for _, s := range b.services(w.Namespace) {
		if len(s.Selector) > 0 && s.Resolution != model.Alias && b.scope.selects(s, w.Endpoint.Cluster) &&
			model.SelectorMatches(s.Selector, w.Endpoint.Labels) {
			out = append(out, s)
		}
	}
	if w.Kind == model.KindPod {
		for _, s := range b.named(w.Key()) {
			if !slices.Contains(out, s) && b.scope.selects(s, w.Endpoint.Cluster) {
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b *model.Service) int { return cmp.Compare(a.Hostname, b.Hostname) })
	return out
}

// podServices is a pod's services map: each service's ports with the
// port the pod listens on. A Kubernetes Service's named targetPort is
// looked up in the pod's container ports, and the port left out when the
// pod has no such port; a ServiceEntry port's name is looked up the same
// way, its target port (else its number) used when the pod has none.
func podServices(w *model.WorkloadInstance, svcs []*model.Service) map[string]*workloadapi.PortList {
	if len(svcs) == 0 {
		return nil
	}
	out := make(map[string]*workloadapi.PortList, len(svcs))
	for _, s := range svcs {
		pl := &workloadapi.PortList{}
		for _, p := range s.Ports {
			target := p.TargetPort
			switch name, targetName := portNames(s, p); {
			case targetName != "":
				n, ok := w.PortMap[targetName]
				if !ok {
					continue
				}
				target = n
			case s.Provider != model.Kubernetes:
				if n, ok := w.PortMap[name]; ok && name != "" {
					target = n
				} else if target == 0 {
					target = p.Port
				}
			}
			pl.Ports = append(pl.Ports, &workloadapi.Port{ServicePort: p.Port, TargetPort: target})
		}
		out[serviceKey(s.Namespace, string(s.Hostname))] = pl
	}
	return out
}

// portNames are the name and the named target port a service's port is
// resolved by, as Istio's index looks them up: by the port's number, so
// of two ports of one number (DNS over UDP and over TCP) both take the
// last one's.
func portNames(s *model.Service, p model.Port) (name, targetName string) {
	name, targetName = p.Name, p.TargetPortName
	for _, q := range s.Ports {
		if q.Port == p.Port {
			name, targetName = q.Name, q.TargetPortName
		}
	}
	return name, targetName
}

// entryServices is a WorkloadEntry's services map, its ports named by
// the entry's port map: a Kubernetes Service's named targetPort must be
// there (else the port is left out), else the service port's name may
// be; a ServiceEntry port's name may be, else its target port (else its
// number) is used. Ports are named as portNames says.
func entryServices(ports map[string]uint32, svcs []*model.Service) map[string]*workloadapi.PortList {
	if len(svcs) == 0 {
		return nil
	}
	out := make(map[string]*workloadapi.PortList, len(svcs))
	for _, s := range svcs {
		pl := &workloadapi.PortList{}
		for _, p := range s.Ports {
			target := p.TargetPort
			name, targetName := portNames(s, p)
			if s.Provider == model.Kubernetes {
				if targetName != "" {
					n, ok := ports[targetName]
					if !ok {
						continue
					}
					target = n
				} else if n, ok := ports[name]; ok {
					target = n
				}
			} else if n, ok := ports[name]; ok {
				target = n
			} else if target == 0 {
				target = p.Port
			}
			pl.Ports = append(pl.Ports, &workloadapi.Port{ServicePort: p.Port, TargetPort: target})
		}
		out[serviceKey(s.Namespace, string(s.Hostname))] = pl
	}
	return out
}

// canonical returns a workload's canonical service name and revision, as
// Istio reads them from its labels.
func canonical(labels map[string]string, workloadName string) (name, revision string) {
	name, revision = workloadName, "latest"
	for _, k := range [...]string{labelCanonicalName, "app.kubernetes.io/name", "app"} {
		if v, ok := labels[k]; ok {
			name = v
			break
		}
	}
	for _, k := range [...]string{labelCanonicalRevision, "app.kubernetes.io/version", "version"} {
		if v, ok := labels[k]; ok {
			revision = v
			break
		}
	}
	return name, revision
}

// setTunnel sets the tunnel protocol: HBONE when the CNI redirects the
// workload to ztunnel, or when it declares the HTTP tunnel itself
// (networking.istio.io/tunnel lists "http"), which also makes it native.
func setTunnel(w *workloadapi.Workload, labels map[string]string, redirected bool) {
	if redirected {
		w.TunnelProtocol = workloadapi.TunnelProtocol_HBONE
	}
	if tl, ok := labels[labelTunnel]; ok && slices.Contains(strings.Split(tl, ","), "http") {
		w.TunnelProtocol = workloadapi.TunnelProtocol_HBONE
		w.NativeTunnel = true
	}
}

// share returns a services map equal to m built earlier in the batch, or
// m.
func (b *builder) share(m map[string]*workloadapi.PortList) map[string]*workloadapi.PortList {
	if len(m) == 0 {
		return m
	}
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key.WriteString(k)
		for _, p := range m[k].Ports {
			key.WriteByte(' ')
			key.WriteString(uitoa(p.ServicePort))
			key.WriteByte(':')
			key.WriteString(uitoa(p.TargetPort))
		}
		key.WriteByte('\n')
	}
	if b.sharedServices == nil {
		b.sharedServices = map[string]map[string]*workloadapi.PortList{}
	}
	if s, ok := b.sharedServices[key.String()]; ok {
		return s
	}
	b.sharedServices[key.String()] = m
	return m
}

// locality returns the message of a locality, shared within the batch.
func (b *builder) locality(l model.Locality) *workloadapi.Locality {
	if s, ok := b.sharedLocalities[l]; ok {
		return s
	}
	out := locality(l)
	if b.sharedLocalities == nil {
		b.sharedLocalities = map[model.Locality]*workloadapi.Locality{}
	}
	b.sharedLocalities[l] = out
	return out
}

func locality(l model.Locality) *workloadapi.Locality {
	if l.Region == "" && l.Zone == "" && l.Subzone == "" {
		return nil
	}
	return &workloadapi.Locality{Region: l.Region, Zone: l.Zone, Subzone: l.Subzone}
}

// gatewayWorkload is the workload of a network gateway.
func (b *builder) gatewayWorkload(g model.NetworkGateway) *workloadapi.Workload {
	uid := gatewayUID(g)
	w := &workloadapi.Workload{Uid: uid, Name: uid, Network: string(g.Network), TrustDomain: b.trustDomain()}
	if ns, sa, ok := strings.Cut(g.ServiceAccount, "/"); ok {
		w.Namespace, w.ServiceAccount = ns, sa
	}
	if ip, err := netip.ParseAddr(g.Address); err == nil {
		w.Addresses = [][]byte{ip.AsSlice()}
	} else {
		w.Hostname = g.Address
	}
	return w
}

// gatewayAddress is how a workload names its network's gateway: the
// first gateway of the network that serves HBONE.
func gatewayAddress(gws []model.NetworkGateway, n model.NetworkID) *workloadapi.GatewayAddress {
	for _, g := range gws {
		if g.Network != n || g.HBONEPort == 0 {
			continue
		}
		if ip, err := netip.ParseAddr(g.Address); err == nil {
			return &workloadapi.GatewayAddress{
				Destination:   &workloadapi.GatewayAddress_Address{Address: &workloadapi.NetworkAddress{Network: string(g.Network), Address: ip.AsSlice()}},
				HboneMtlsPort: g.HBONEPort,
			}
		}
		ns, _, _ := strings.Cut(g.ServiceAccount, "/")
		return &workloadapi.GatewayAddress{
			Destination:   &workloadapi.GatewayAddress_Hostname{Hostname: &workloadapi.NamespacedHostname{Namespace: ns, Hostname: g.Address}},
			HboneMtlsPort: g.HBONEPort,
		}
	}
	return nil
}

func uitoa(n uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
