package serviceentry

import (
	"maps"
	"net/netip"
	"strconv"
	"strings"

	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

// Labels and annotations the conversion reads or adds.
const (
	labelTLSMode         = "security.istio.io/tlsMode"
	labelTopologyCluster = "topology.istio.io/cluster"
	labelTopologyNetwork = "topology.istio.io/network"
	labelTopologyRegion  = "topology.kubernetes.io/region"
	labelTopologyZone    = "topology.kubernetes.io/zone"
	labelTopologySubzone = "topology.istio.io/subzone"

	// annotationHealthChecks turns on health checking of a WorkloadEntry:
	// with a value strconv.ParseBool reads as true, the entry is used
	// only while its status has a Healthy condition with status True.
	annotationHealthChecks = "proxy.istio.io/health-checks-enabled"
	conditionHealthy       = "Healthy"

	// annotationAutoRegistrationGroup names the WorkloadGroup that
	// registered an entry.
	annotationAutoRegistrationGroup = "istio.io/autoRegistrationGroup"
)

// convCtx is what conversion needs from the controller's options.
type convCtx struct {
	Cluster     model.ClusterID
	TrustDomain string
}

// convertWorkloadEntry converts a valid WorkloadEntry into the workload
// instance published for Kubernetes Service selectors and selected by
// ServiceEntry workloadSelectors.
//
//   - Labels are the spec's labels merged with the metadata's; on a
//     conflict the metadata label wins (as in Istio). The topology labels
//     of the cluster, network and locality are added.
//   - TLS mode: the security.istio.io/tlsMode label when present, else
//     istio when a service account is set (the workload then has an
//     identity, so it runs a proxy), else disabled.
//   - Health: Healthy. An entry that fails its health checks is not
//     converted at all (see workloadEntryHealthy).
//   - Locality: the spec's, else the one its labels give
//     (model.LocalityLabel: topology.istio.io/locality, else istio-locality).
func convertWorkloadEntry(we *networkingv1.WorkloadEntry, c convCtx) *model.WorkloadInstance {
	labels := maps.Clone(we.Spec.Labels)
	if labels == nil && len(we.Labels) > 0 {
		labels = make(map[string]string, len(we.Labels))
	}
	maps.Copy(labels, we.Labels)
	ep := workloadEndpointBase(&we.Spec, labels, we.Namespace, c)
	ep.WorkloadKind = model.KindWorkloadEntry
	ep.WorkloadNamespace = we.Namespace
	ep.WorkloadName = we.Name
	var portMap map[string]uint32
	if len(we.Spec.Ports) > 0 {
		portMap = maps.Clone(we.Spec.Ports)
	}
	return &model.WorkloadInstance{
		Kind:         model.KindWorkloadEntry,
		Namespace:    we.Namespace,
		Name:         we.Name,
		Endpoint:     ep,
		PortMap:      portMap,
		WorkloadName: workloadEntryName(we, labels),
		Redirected:   we.Annotations[model.AmbientRedirectionAnnotation] == "enabled",
	}
}

// workloadEntryName returns the name of the workload a WorkloadEntry is
// one of, as Istio derives it: its auto-registration group, else the
// service.istio.io/workload-name label (of the merged labels), else the
// entry's name.
func workloadEntryName(we *networkingv1.WorkloadEntry, labels map[string]string) string {
	if g, ok := we.Annotations[annotationAutoRegistrationGroup]; ok {
		return g
	}
	if wn, ok := labels[model.WorkloadNameLabel]; ok {
		return wn
	}
	return we.Name
}

// workloadEntryHealthy reports whether a WorkloadEntry may be used: its
// health checks are off (the annotation proxy.istio.io/health-checks-enabled
// unset, or not true for strconv.ParseBool), or its status has a Healthy
// condition with status True. As in Istio, an entry that fails is left
// out entirely, neither a workload nor an endpoint, rather than published
// unhealthy: a new entry counts as failing until its first probe passes.
func workloadEntryHealthy(we *networkingv1.WorkloadEntry) bool {
	if on, err := strconv.ParseBool(we.Annotations[annotationHealthChecks]); err != nil || !on {
		return true
	}
	for _, cond := range we.Status.Conditions {
		if cond != nil && cond.Type == conditionHealthy {
			return cond.Status == "True"
		}
	}
	return false
}

// workloadEndpointBase converts the fields a WorkloadEntry and a
// ServiceEntry endpoint share into an endpoint without port, with the
// given labels (which it takes and may extend).
func workloadEndpointBase(w *v1alpha3.WorkloadEntry, labels map[string]string, namespace string, c convCtx) model.Endpoint {
	ep := model.Endpoint{
		Network:        model.NetworkID(w.Network),
		Cluster:        c.Cluster,
		ServiceAccount: model.SpiffeIdentity(c.TrustDomain, namespace, w.ServiceAccount),
		Weight:         w.Weight,
		Serving:        true,
	}
	setAddress(&ep, w.Address)
	switch mode, ok := labels[labelTLSMode]; {
	case ok:
		ep.TLSMode = model.ParseTLSMode(mode)
	case w.ServiceAccount != "":
		ep.TLSMode = model.TLSIstio
	}
	loc := w.Locality
	if loc == "" {
		loc = model.LocalityLabel(labels)
	}
	ep.Locality = model.ParseLocality(loc)
	ep.Labels = topologyLabels(labels, c.Cluster, ep.Network, ep.Locality)
	return ep
}

// setAddress sets an IP as the endpoint's address, anything else (a DNS
// name, a unix:// path) as its hostname; "" sets nothing.
func setAddress(ep *model.Endpoint, addr string) {
	if addr == "" {
		return
	}
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Zone() == "" {
		ep.Addresses = []netip.Addr{ip.Unmap()}
		return
	}
	ep.Hostname = addr
}

// topologyLabels returns labels with the topology labels Istio adds to
// workload labels: cluster, network, region, zone and subzone, each when
// known. It modifies and returns labels, or a new map when labels is nil.
func topologyLabels(labels map[string]string, cluster model.ClusterID, network model.NetworkID, loc model.Locality) map[string]string {
	if labels == nil {
		labels = make(map[string]string, 5)
	}
	set := func(k, v string) {
		if v != "" {
			labels[k] = v
		}
	}
	set(labelTopologyCluster, string(cluster))
	set(labelTopologyNetwork, string(network))
	set(labelTopologyRegion, loc.Region)
	set(labelTopologyZone, loc.Zone)
	set(labelTopologySubzone, loc.Subzone)
	return labels
}

// isUnix reports whether an endpoint is a unix domain socket.
func isUnix(ep *model.Endpoint) bool { return strings.HasPrefix(ep.Hostname, unixPrefix) }
