package address

import (
	"maps"
	"net/netip"
	"slices"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// Which clusters and networks the index holds, as Istio's ambient index
// decides it.
//
// Without Options.MultiNetwork (Istio's AMBIENT_ENABLE_MULTI_NETWORK
// off, its default) the index holds the config cluster alone: its
// workloads, its Services (with their VIPs there) and ServiceEntries, and
// the network gateways of its own istio-remote Gateways.
//
// With it, the index spans every cluster as Istio's multicluster ambient
// mode does. A workload is sent when it is on the local network (the
// config cluster's); a workload on another network never is: for each
// such network and each global service it backs there, one
// split-horizon workload stands for all of them, reached through the
// network's gateway, and a global service's subject alternative names
// hold the identities of its workloads on other networks, so that
// ztunnel accepts their certificates behind the gateway. A Kubernetes
// Service is sent when the config cluster declares it, or another
// cluster does and the Service is global there (Options.ServiceScopes,
// model.ServiceScope):
// with the config cluster's VIPs, and those of every cluster where it is
// global when it is global in the config cluster or not declared there.
// The network gateways are the config cluster's istio-remote Gateways'
// and the other clusters' istio-east-west Gateways'.

// scope is what the index needs to apply the rules above, for one
// batch.
type scope struct {
	multi bool
	// config is the config cluster, local its network.
	config model.ClusterID
	local  model.NetworkID
	scopes []model.ServiceScope
	meta   *meta
}

// admits reports whether a workload of a cluster, on a network, is sent
// as itself.
func (s scope) admits(c model.ClusterID, n model.NetworkID) bool {
	if !s.multi {
		return s.config == "" || c == s.config
	}
	return n == s.local
}

// declares reports whether a service is declared by a cluster: a
// registry's services name their cluster (model.Service.Clusters); a
// service that names none is taken as declared everywhere.
func declares(svc *model.Service, c model.ClusterID) bool {
	return len(svc.Clusters) == 0 || slices.Contains(svc.Clusters, c)
}

// global reports whether a Kubernetes Service is global in a cluster.
func (s scope) global(svc *model.Service, c model.ClusterID) bool {
	if !s.multi || svc.Provider != model.Kubernetes {
		return false
	}
	var nsLabels map[string]string
	if ns := s.meta.namespace(c, svc.Namespace); ns != nil {
		nsLabels = ns.Labels
	}
	for _, sc := range s.scopes {
		if sc.Global && sc.Selects(nsLabels, svc.Labels) {
			return true
		}
	}
	return false
}

// selects reports whether a service may select a workload of a cluster:
// a ServiceEntry one of the config cluster's (without MultiNetwork there
// are no others), as Istio's multicluster index selects them; a
// Kubernetes Service one of a cluster that declares it, which with
// MultiNetwork must be the config cluster or one where the Service is
// global.
func (s scope) selects(svc *model.Service, c model.ClusterID) bool {
	if svc.Provider != model.Kubernetes {
		return !s.multi || c == s.config
	}
	if !declares(svc, c) {
		return false
	}
	return !s.multi || c == s.config || s.global(svc, c)
}

// serviceClusters returns the clusters whose VIPs a Kubernetes Service
// is sent with, and whether it is sent at all; and whether it is global
// (its merged scope, that of its config cluster's version when there is
// one).
func (s scope) serviceClusters(svc *model.Service) (clusters []model.ClusterID, sent, global bool) {
	if svc.Provider != model.Kubernetes {
		// A ServiceEntry's visibility None configures no proxy.
		return nil, svc.Visibility != model.VisibilityNone, false
	}
	local := declares(svc, s.config)
	if !s.multi {
		if s.config == "" {
			return slices.Sorted(maps.Keys(svc.Addresses)), true, false
		}
		return []model.ClusterID{s.config}, local, false
	}
	if local && !s.global(svc, s.config) {
		return []model.ClusterID{s.config}, true, false
	}
	for _, c := range slices.Sorted(maps.Keys(svc.Addresses)) {
		if c == s.config || s.global(svc, c) {
			clusters = append(clusters, c)
		}
	}
	if !local {
		// Sent only when some other cluster holds it global.
		sent = slices.ContainsFunc(svc.Clusters, func(c model.ClusterID) bool { return s.global(svc, c) })
		return clusters, sent, sent
	}
	return clusters, true, true
}

// remoteBacking is what a workload on another network lends the global
// services it backs: its network, its capacity and its identity.
type remoteBacking struct {
	network  model.NetworkID
	capacity uint32
	identity string
}

// backingOf returns a workload's remote backing.
func backingOf(w *workloadapi.Workload, trustDomain string) remoteBacking {
	capacity := uint32(1)
	if c := w.GetCapacity().GetValue(); c != 0 {
		capacity = c
	}
	// Istio writes the identity of a workload without a service account
	// too, ending in "/sa/".
	return remoteBacking{network: model.NetworkID(w.Network), capacity: capacity,
		identity: "spiffe://" + trustDomain + "/ns/" + w.Namespace + "/sa/" + w.ServiceAccount}
}

// splitHorizonUID is the uid of the workload that stands for a
// service's workloads on a network behind a gateway, as Istio names it.
func splitHorizonUID(n model.NetworkID, gw model.NetworkGateway, gwNamespace, gwName, svcKey string) string {
	return string(n) + "/SplitHorizonWorkload/" + gwNamespace + "/" + gwName + "/" + gw.Address + "/" + svcKey
}

// splitHorizon builds the workload that stands for a service's workloads
// on a network: no address, the network's gateway, capacity the sum of
// theirs, HBONE, the service's ports.
func (b *builder) splitHorizon(svc *workloadapi.Service, n model.NetworkID, gw model.NetworkGateway, gwNamespace, gwName string, capacity uint32) *workloadapi.Workload {
	key := serviceKey(svc.Namespace, svc.Hostname)
	uid := splitHorizonUID(n, gw, gwNamespace, gwName, key)
	port := gw.HBONEPort
	if port == 0 {
		port = hbonePort
	}
	out := &workloadapi.Workload{
		Uid: uid, Name: uid, Namespace: svc.Namespace, Network: string(n), TrustDomain: b.trustDomain(),
		Capacity: wrapperspb.UInt32(capacity), WorkloadType: workloadapi.WorkloadType_POD,
		TunnelProtocol: workloadapi.TunnelProtocol_HBONE, ClusterId: string(gw.Cluster),
		Services: map[string]*workloadapi.PortList{key: {Ports: svc.Ports}},
	}
	if ip, err := netip.ParseAddr(gw.Address); err == nil {
		out.NetworkGateway = &workloadapi.GatewayAddress{
			Destination:   &workloadapi.GatewayAddress_Address{Address: &workloadapi.NetworkAddress{Network: string(n), Address: ip.AsSlice()}},
			HboneMtlsPort: port,
		}
	} else {
		out.NetworkGateway = &workloadapi.GatewayAddress{
			Destination:   &workloadapi.GatewayAddress_Hostname{Hostname: &workloadapi.NamespacedHostname{Namespace: gwNamespace, Hostname: gw.Address}},
			HboneMtlsPort: port,
		}
	}
	return out
}
