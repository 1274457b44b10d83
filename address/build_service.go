package address

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

const labelIngressUseWaypoint = "istio.io/ingress-use-waypoint"

// service builds a service's message; nil for an ExternalName Service,
// which ambient does not serve. canonical says whether it is the one of
// its hostname that clients of other namespaces reach; clusters, for a
// Kubernetes Service, the clusters whose VIPs it is sent with
// (scope.serviceClusters).
func (b *builder) service(s *model.Service, canonical bool, clusters []model.ClusterID) (*workloadapi.Service, string) {
	if s.Resolution == model.Alias {
		return nil, ""
	}
	out := &workloadapi.Service{
		Name:      s.Name,
		Namespace: s.Namespace,
		Hostname:  string(s.Hostname),
		Canonical: canonical,
	}
	kube := s.Provider == model.Kubernetes
	if !kube {
		clusters = slices.Sorted(maps.Keys(s.Addresses))
	}
	for _, c := range clusters {
		network := string(b.meta.network(c))
		for _, p := range s.Addresses[c] {
			na := &workloadapi.NetworkAddress{Network: network, Address: p.Addr().AsSlice()}
			if !p.IsSingleIP() {
				n := uint32(p.Bits())
				na.Length = &n
			}
			out.Addresses = append(out.Addresses, na)
		}
	}
	if kube && len(clusters) > 1 {
		sortMergedVIPs(out)
	}
	if !kube && len(out.Addresses) == 0 && s.Resolution != model.Passthrough &&
		(!s.Hostname.IsWildcard() || s.Resolution == model.DynamicDNS) {
		network := string(b.meta.network(b.config))
		for _, a := range s.AutoAddresses {
			out.Addresses = append(out.Addresses, &workloadapi.NetworkAddress{Network: network, Address: a.AsSlice()})
		}
	}
	for _, p := range s.Ports {
		target := p.TargetPort
		switch {
		case p.Origin != "":
			// A port merged from a younger entry of the host: the
			// endpoints of the entry the service is named after do not
			// serve it. Without a target port, ztunnel sends it only to
			// the workloads whose port lists name it (the Pods and
			// WorkloadEntries the entries select), as it does for a
			// Kubernetes Service's named target port.
			target = 0
		case !kube && target == 0:
			target = p.Port
		}
		out.Ports = append(out.Ports, &workloadapi.Port{ServicePort: p.Port, TargetPort: target, AppProtocol: appProtocol(p.Protocol)})
	}
	switch {
	case kube && s.InternalTrafficPolicyLocal:
		out.LoadBalancing = &workloadapi.LoadBalancing{
			RoutingPreference: []workloadapi.LoadBalancing_Scope{workloadapi.LoadBalancing_NODE},
			Mode:              workloadapi.LoadBalancing_STRICT,
		}
	case !kube && s.Resolution == model.Passthrough:
		out.LoadBalancing = &workloadapi.LoadBalancing{
			Mode:         workloadapi.LoadBalancing_PASSTHROUGH,
			HealthPolicy: workloadapi.LoadBalancing_ALLOW_ALL,
		}
	default:
		out.LoadBalancing = trafficDistribution(s.TrafficDistribution)
	}
	if kube {
		if s.PublishNotReadyAddresses {
			if out.LoadBalancing == nil {
				out.LoadBalancing = &workloadapi.LoadBalancing{}
			}
			out.LoadBalancing.HealthPolicy = workloadapi.LoadBalancing_ALLOW_ALL
		}
		out.IpFamilies = ipFamilies(s.IPFamilies)
	} else {
		out.SubjectAltNames = s.ServiceAccounts
		if s.Visibility == model.VisibilityNamespace {
			out.Visibility = workloadapi.Service_NAMESPACE
		}
	}
	home := b.home(s)
	w, problem := serviceWaypoint(b.meta, home, s)
	if w != nil {
		out.Waypoint = w.Address
		out.IngressUseWaypoint = b.ingressUseWaypoint(home, s)
		if problem == "" {
			out.WeightedWaypoints, problem = weightedWaypoints(b.meta, home, s, w)
		}
	}
	return out, problem
}

// home is the cluster whose namespaces and Gateways decide a service's
// waypoint: the config cluster for a ServiceEntry, or for a Kubernetes
// Service it declares (has VIPs in) or that no cluster declares
// (headless); else the first cluster by ID that declares it.
func (b *builder) home(s *model.Service) model.ClusterID {
	if s.Provider != model.Kubernetes || len(s.Addresses) == 0 {
		return b.config
	}
	if _, ok := s.Addresses[b.config]; ok {
		return b.config
	}
	return slices.Sorted(maps.Keys(s.Addresses))[0]
}

// ingressUseWaypoint reads istio.io/ingress-use-waypoint from the
// service, else its namespace.
func (b *builder) ingressUseWaypoint(home model.ClusterID, s *model.Service) bool {
	v, ok := s.Labels[labelIngressUseWaypoint]
	if !ok {
		if n := b.meta.namespace(home, s.Namespace); n != nil {
			v, ok = n.Labels[labelIngressUseWaypoint]
		}
	}
	use, err := strconv.ParseBool(v)
	return ok && err == nil && use
}

func trafficDistribution(td string) *workloadapi.LoadBalancing {
	scopes := []workloadapi.LoadBalancing_Scope{workloadapi.LoadBalancing_NETWORK, workloadapi.LoadBalancing_REGION, workloadapi.LoadBalancing_ZONE}
	switch td {
	case model.TrafficPreferSameZone:
	case model.TrafficPreferSameNode:
		scopes = append(scopes, workloadapi.LoadBalancing_SUBZONE, workloadapi.LoadBalancing_NODE)
	default:
		return nil
	}
	return &workloadapi.LoadBalancing{RoutingPreference: scopes, Mode: workloadapi.LoadBalancing_FAILOVER}
}

func ipFamilies(f model.IPFamilies) workloadapi.IPFamilies {
	switch f {
	case model.IPv4:
		return workloadapi.IPFamilies_IPV4_ONLY
	case model.IPv6:
		return workloadapi.IPFamilies_IPV6_ONLY
	case model.IPv4 | model.IPv6:
		return workloadapi.IPFamilies_DUAL
	}
	return workloadapi.IPFamilies_AUTOMATIC
}

func appProtocol(p model.Protocol) workloadapi.AppProtocol {
	switch p {
	case model.HTTP:
		return workloadapi.AppProtocol_HTTP11
	case model.HTTP2:
		return workloadapi.AppProtocol_HTTP2
	case model.GRPC:
		return workloadapi.AppProtocol_GRPC
	case model.TLS, model.HTTPS:
		return workloadapi.AppProtocol_TLS
	case model.TCP:
		return workloadapi.AppProtocol_TCP
	}
	return workloadapi.AppProtocol_UNKNOWN
}

// canonicalOf picks, among the services of one hostname in several
// namespaces, the one other namespaces reach: a Kubernetes Service, else
// the oldest ServiceEntry that other namespaces may see (its visibility
// is not Namespace), else the first by namespace and name
// (model.ComparePrecedence).
func canonicalOf(svcs []*model.Service) *model.Service {
	var best *model.Service
	for _, s := range svcs {
		if s.Resolution == model.Alias || s.Visibility == model.VisibilityNamespace {
			continue // not served, or not reachable from other namespaces
		}
		if best == nil || model.ComparePrecedence(s, best) < 0 {
			best = s
		}
	}
	return best
}

// sortMergedVIPs orders the VIPs of a Service merged from several
// clusters as Istio's merge does: by "network/prefix" as text, without
// duplicates.
func sortMergedVIPs(svc *workloadapi.Service) {
	key := func(na *workloadapi.NetworkAddress) string {
		ip, _ := netip.AddrFromSlice(na.Address)
		bits := ip.BitLen()
		if na.Length != nil {
			bits = int(*na.Length)
		}
		return na.Network + "/" + netip.PrefixFrom(ip, bits).String()
	}
	slices.SortStableFunc(svc.Addresses, func(a, b *workloadapi.NetworkAddress) int { return strings.Compare(key(a), key(b)) })
	svc.Addresses = slices.CompactFunc(svc.Addresses, func(a, b *workloadapi.NetworkAddress) bool { return key(a) == key(b) })
}
