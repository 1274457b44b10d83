package kube

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshreg/meshreg/model"
)

// serviceConfig is what Service conversion needs besides the Service.
type serviceConfig struct {
	cluster model.ClusterID
	// clusters is []model.ClusterID{cluster}, shared by the services.
	clusters     []model.ClusterID
	domainSuffix string
	trustDomain  string
}

// convertService converts a Kubernetes Service into a model.Service of
// this cluster. It never fails: what it cannot use is left out and
// reported in the diagnostics (kind Service), and the rest is kept.
//
// Rules beyond the obvious field copies:
//   - type ExternalName → resolution Alias, mesh-external, ExternalName set,
//     no VIPs; clusterIP None (headless) → Passthrough; else ClientSideLB;
//   - VIPs are spec.clusterIPs (or spec.clusterIP when that list is
//     empty), for this cluster; malformed ones are reported and skipped;
//   - external addresses are each LoadBalancer ingress's IP (else its
//     hostname, as Istio does) for type LoadBalancer, then spec.externalIPs,
//     without duplicates;
//   - an empty selector is no selector (it selects nothing), as Kubernetes
//     treats it;
//   - the traffic distribution is model.ParseTrafficDistribution's, from
//     the spec, the Service's annotation and nsTraffic, its namespace's
//     annotation; a value it ignores is a warning.
func convertService(svc *corev1.Service, nsTraffic string, cfg serviceConfig) (*model.Service, []model.Diagnostic) {
	var diags []model.Diagnostic
	report := func(sev model.Severity, format string, args ...any) {
		diags = append(diags, model.Diagnostic{
			Severity: sev, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name,
			Cluster: cfg.cluster, Message: fmt.Sprintf(format, args...),
		})
	}
	out := &model.Service{
		Hostname:                   model.KubeServiceHostname(svc.Name, svc.Namespace, cfg.domainSuffix),
		Namespace:                  svc.Namespace,
		Name:                       svc.Name,
		Provider:                   model.Kubernetes,
		Clusters:                   cfg.clusters,
		Resolution:                 serviceResolution(svc),
		ExportTo:                   parseExportTo(svc.Annotations[annotationExportTo]),
		Labels:                     maps.Clone(svc.Labels),
		Annotations:                model.KeepAnnotations(svc.Annotations),
		ServiceAccounts:            serviceAccounts(svc.Annotations, svc.Namespace, cfg.trustDomain),
		InternalTrafficPolicyLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
		PublishNotReadyAddresses:   svc.Spec.PublishNotReadyAddresses,
		IPFamilies:                 ipFamilies(svc.Spec.IPFamilies),
		CreationTime:               svc.CreationTimestamp.Time,
	}
	if len(svc.Spec.Selector) > 0 {
		out.Selector = maps.Clone(svc.Spec.Selector)
	}
	td, err := model.ParseTrafficDistribution(ptrOr(svc.Spec.TrafficDistribution), svc.Annotations[model.TrafficDistributionAnnotation], nsTraffic)
	out.TrafficDistribution = td
	if err != nil {
		report(model.Warning, "%v", err)
	}
	if out.Resolution == model.Alias {
		out.MeshExternal = true
		out.ExternalName = svc.Spec.ExternalName
		if out.ExternalName == "" {
			report(model.Warning, "ExternalName service has no spec.externalName")
		}
	}
	for _, msg := range servicePorts(svc, &out.Ports) {
		report(model.Warning, "%s", msg)
	}
	if out.Resolution != model.Alias {
		vips, bad := serviceVIPs(svc)
		for _, ip := range bad {
			report(model.Warning, "malformed cluster IP %q ignored", ip)
		}
		if len(vips) > 0 {
			out.Addresses = map[model.ClusterID][]netip.Prefix{cfg.cluster: vips}
		}
	}
	if ext := externalAddresses(svc); len(ext) > 0 {
		out.ExternalAddresses = map[model.ClusterID][]string{cfg.cluster: ext}
	}
	return out, diags
}

// serviceResolution returns Alias for ExternalName services, Passthrough
// for headless ones, else ClientSideLB.
func serviceResolution(svc *corev1.Service) model.Resolution {
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return model.Alias
	case isHeadless(svc):
		return model.Passthrough
	}
	return model.ClientSideLB
}

// isHeadless reports whether the Service has clusterIP None.
func isHeadless(svc *corev1.Service) bool {
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return true
	}
	return len(svc.Spec.ClusterIPs) > 0 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// servicePorts appends the Service's usable ports to *ports, in
// declaration order, and returns a message for each port it drops. A port
// is dropped when its number is outside 1-65535, or when an earlier port
// has the same name or the same number and transport protocol (Kubernetes
// allows 53/UDP and 53/TCP side by side, so both are kept). An unknown
// transport protocol is reported and treated as TCP.
func servicePorts(svc *corev1.Service, ports *[]model.Port) []string {
	var msgs []string
	type numProto struct {
		port  int32
		proto corev1.Protocol
	}
	seenNum := map[numProto]bool{}
	seenName := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		proto := p.Protocol
		switch proto {
		case "":
			proto = corev1.ProtocolTCP
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			msgs = append(msgs, fmt.Sprintf("port %d (%q) has unknown protocol %q; treated as TCP", p.Port, p.Name, p.Protocol))
			proto = corev1.ProtocolTCP
		}
		if p.Port < 1 || p.Port > 65535 {
			msgs = append(msgs, fmt.Sprintf("port %d (%q) is out of range; ignored", p.Port, p.Name))
			continue
		}
		if seenName[p.Name] {
			msgs = append(msgs, fmt.Sprintf("port %d: duplicate port name %q; ignored", p.Port, p.Name))
			continue
		}
		np := numProto{p.Port, proto}
		if seenNum[np] {
			msgs = append(msgs, fmt.Sprintf("port %q: duplicate port %d/%s; ignored", p.Name, p.Port, proto))
			continue
		}
		seenName[p.Name], seenNum[np] = true, true
		app := ""
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		mp := model.Port{
			Name:     p.Name,
			Port:     uint32(p.Port),
			Protocol: model.DetectProtocol(uint32(p.Port), p.Name, app, proto == corev1.ProtocolUDP),
		}
		if p.NodePort > 0 && p.NodePort <= 65535 {
			mp.NodePort = uint32(p.NodePort)
		}
		switch p.TargetPort.Type {
		case intstr.Int:
			if v := p.TargetPort.IntVal; v > 0 && v <= 65535 {
				mp.TargetPort = uint32(v)
			}
		case intstr.String:
			mp.TargetPortName = p.TargetPort.StrVal
		}
		*ports = append(*ports, mp)
	}
	return msgs
}

// serviceVIPs returns the Service's cluster IPs as single-address
// prefixes, and the values it could not parse. A headless or ExternalName
// service has none.
func serviceVIPs(svc *corev1.Service) (vips []netip.Prefix, bad []string) {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	for _, s := range ips {
		if s == "" || s == corev1.ClusterIPNone {
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			bad = append(bad, s)
			continue
		}
		a = a.Unmap()
		p := netip.PrefixFrom(a, a.BitLen())
		if !slices.Contains(vips, p) {
			vips = append(vips, p)
		}
	}
	return vips, bad
}

// externalAddresses returns the LoadBalancer ingress addresses (IP, else
// hostname) of a LoadBalancer Service, then its externalIPs, without
// duplicates, in that order.
func externalAddresses(svc *corev1.Service) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				add(in.IP)
			} else {
				add(in.Hostname)
			}
		}
	}
	for _, ip := range svc.Spec.ExternalIPs {
		add(ip)
	}
	return out
}

// parseExportTo reads the networking.istio.io/exportTo annotation: a
// comma-separated list, returned trimmed, sorted and without duplicates or
// empty items; nil (exported everywhere) when empty.
func parseExportTo(v string) []string {
	return splitSortedList(v)
}

// serviceAccounts returns the SPIFFE identities of a Service's
// annotations, sorted and without duplicates:
// alpha.istio.io/canonical-serviceaccounts lists identities used as they
// are; alpha.istio.io/kubernetes-serviceaccounts lists Kubernetes service
// accounts of the Service's namespace, turned into SPIFFE identities.
func serviceAccounts(annotations map[string]string, namespace, trustDomain string) []string {
	out := splitSortedList(annotations[annotationCanonicalServiceAccounts])
	for _, sa := range splitSortedList(annotations[annotationKubernetesServiceAccounts]) {
		out = append(out, model.SpiffeIdentity(trustDomain, namespace, sa))
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// splitSortedList splits a comma-separated list, trims each item, drops
// empty ones, and returns the rest sorted without duplicates; nil when
// nothing remains.
func splitSortedList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ipFamilies returns the families a Service lists.
func ipFamilies(fams []corev1.IPFamily) model.IPFamilies {
	var out model.IPFamilies
	for _, f := range fams {
		switch f {
		case corev1.IPv4Protocol:
			out |= model.IPv4
		case corev1.IPv6Protocol:
			out |= model.IPv6
		}
	}
	return out
}
