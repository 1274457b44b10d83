package serviceentry

import (
	"maps"
	"net/netip"
	"slices"

	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

// convertResolution maps a ServiceEntry resolution to the model's: NONE is
// Passthrough, STATIC ClientSideLB, DNS DNS, DNS_ROUND_ROBIN DNSRoundRobin,
// DYNAMIC_DNS DynamicDNS. Validation refuses the others.
func convertResolution(r v1alpha3.ServiceEntry_Resolution) model.Resolution {
	switch r {
	case v1alpha3.ServiceEntry_STATIC:
		return model.ClientSideLB
	case v1alpha3.ServiceEntry_DNS:
		return model.DNS
	case v1alpha3.ServiceEntry_DNS_ROUND_ROBIN:
		return model.DNSRoundRobin
	case v1alpha3.ServiceEntry_DYNAMIC_DNS:
		return model.DynamicDNS
	}
	return model.Passthrough
}

// convertPorts returns the entry's ports in declaration order, each with
// the protocol its protocol field names (Unsupported when unset).
func convertPorts(se *networkingv1.ServiceEntry) []model.Port {
	out := make([]model.Port, 0, len(se.Spec.Ports))
	for _, p := range se.Spec.Ports {
		if p == nil {
			continue
		}
		out = append(out, model.Port{
			Name:       p.Name,
			Port:       p.Number,
			Protocol:   model.ParseProtocol(p.Protocol),
			TargetPort: p.TargetPort,
		})
	}
	return out
}

// convertServices converts a valid ServiceEntry into one Service per host,
// in the order hosts are first listed, each with all of the entry's addresses as its VIPs in
// cluster and the traffic distribution given. Auto-allocated addresses are
// not set here (see vipAllocator). Invalid parts of an unvalidated entry
// are skipped, never a panic.
func convertServices(se *networkingv1.ServiceEntry, cluster model.ClusterID, traffic string) []*model.Service {
	spec := &se.Spec
	var vips []netip.Prefix
	for _, a := range spec.Addresses {
		if v, err := parseVIP(a); err == nil && !slices.Contains(vips, v.prefix) {
			vips = append(vips, v.prefix)
		}
	}
	var addresses map[model.ClusterID][]netip.Prefix
	if len(vips) > 0 {
		addresses = map[model.ClusterID][]netip.Prefix{cluster: vips}
	}
	var exportTo []string
	if len(spec.ExportTo) > 0 {
		exportTo = slices.Compact(slices.Sorted(slices.Values(spec.ExportTo)))
	}
	var sans []string
	if len(spec.SubjectAltNames) > 0 {
		sans = slices.Compact(slices.Sorted(slices.Values(spec.SubjectAltNames)))
	}
	var selector map[string]string
	if spec.WorkloadSelector != nil {
		selector = map[string]string{}
		for k, v := range spec.WorkloadSelector.Labels {
			selector[k] = v
		}
	}
	ports := convertPorts(se)
	labels := maps.Clone(se.Labels)
	annotations := model.KeepAnnotations(se.Annotations)
	out := make([]*model.Service, 0, len(spec.Hosts))
	clusters := []model.ClusterID{cluster}
	for _, h := range spec.Hosts {
		if slices.ContainsFunc(out, func(s *model.Service) bool { return s.Hostname == model.Hostname(h) }) {
			continue // a host listed twice is one service
		}
		out = append(out, &model.Service{
			Hostname:            model.Hostname(h),
			Namespace:           se.Namespace,
			Name:                se.Name,
			Provider:            model.External,
			Clusters:            clusters,
			Resolution:          convertResolution(spec.Resolution),
			MeshExternal:        spec.Location == v1alpha3.ServiceEntry_MESH_EXTERNAL,
			Ports:               ports,
			Addresses:           addresses,
			ExportTo:            exportTo,
			Labels:              labels,
			Annotations:         annotations,
			Selector:            selector,
			ServiceAccounts:     sans,
			TrafficDistribution: traffic,
			CreationTime:        se.CreationTimestamp.Time,
		})
	}
	return out
}
