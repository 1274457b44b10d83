package serviceentry

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

// labelUseWaypoint names the waypoint a ServiceEntry's traffic goes
// through; "none" (any case) for none.
const labelUseWaypoint = "istio.io/use-waypoint"

// validateServiceEntry checks the rules Istio's admission webhook applies
// to a ServiceEntry (see ARCHITECTURE.md decision 9): it returns the
// warnings of a usable entry, and every violation of an unusable one in
// one error. Each message names its field.
func validateServiceEntry(se *networkingv1.ServiceEntry) (warnings []string, err error) {
	var p problems
	spec := &se.Spec
	checkSelector(&p, spec)
	checkHosts(&p, spec)
	checkAddresses(&p, spec)
	ports := checkPorts(&p, se)
	switch spec.Resolution {
	case v1alpha3.ServiceEntry_NONE:
		if len(spec.Endpoints) > 0 {
			p.errorf("endpoints: not allowed with resolution NONE")
		}
		if spec.WorkloadSelector != nil {
			p.warnf("workloadSelector: has no use with resolution NONE")
		}
	case v1alpha3.ServiceEntry_STATIC:
		checkEndpoints(&p, spec, staticAddresses, ports)
	case v1alpha3.ServiceEntry_DNS, v1alpha3.ServiceEntry_DNS_ROUND_ROBIN:
		checkDNS(&p, spec, ports)
	case v1alpha3.ServiceEntry_DYNAMIC_DNS:
		checkDynamicDNS(&p, se)
	default:
		p.errorf("resolution: %s is not supported", spec.Resolution)
	}
	if spec.Resolution != v1alpha3.ServiceEntry_NONE && len(spec.Hosts) > 1 {
		for _, port := range spec.Ports {
			if port != nil && !tellsHostsApart(model.ParseProtocol(port.Protocol)) {
				p.errorf("hosts: several hosts need ports that tell them apart (HTTP or TLS): port %q is %s", port.Name, protocolName(port.Protocol))
				break
			}
		}
	}
	for _, err := range exportToErrors(se.Namespace, spec.ExportTo) {
		p.errorf("%v", err)
	}
	return p.result()
}

// checkSelector checks a workloadSelector: label keys present and no
// wildcards; one without labels selects every workload of the namespace,
// which is allowed with a warning; and not together with endpoints.
func checkSelector(p *problems, spec *v1alpha3.ServiceEntry) {
	sel := spec.WorkloadSelector
	if sel == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(sel.Labels)) {
		v := sel.Labels[k]
		if k == "" {
			p.errorf("workloadSelector: empty label key (value %q)", v)
		}
		if strings.Contains(k, "*") || strings.Contains(v, "*") {
			p.errorf("workloadSelector: %s=%s: wildcards are not supported", k, v)
		}
	}
	if len(sel.Labels) == 0 {
		p.warnf("workloadSelector: no labels, so it selects every workload of the namespace")
	}
	if len(spec.Endpoints) > 0 {
		p.errorf("workloadSelector: not allowed together with endpoints")
	}
}

func checkHosts(p *problems, spec *v1alpha3.ServiceEntry) {
	if len(spec.Hosts) == 0 {
		p.errorf("hosts: none given")
	}
	seen := map[string]bool{}
	for _, h := range spec.Hosts {
		switch err := checkHost(h); {
		case err != nil:
			p.errorf("hosts: %q: %v", h, err)
		case seen[h]:
			p.warnf("hosts: %q listed twice", h)
		case isPartialWildcard(h) && spec.Resolution != v1alpha3.ServiceEntry_DYNAMIC_DNS:
			p.warnf("hosts: %q: a partial wildcard, not a whole first label", h)
		}
		seen[h] = true
	}
}

// checkAddresses checks that each address is an IP or a CIDR, and that
// CIDRs come only with resolution NONE or STATIC.
func checkAddresses(p *problems, spec *v1alpha3.ServiceEntry) {
	cidr := false
	for _, a := range spec.Addresses {
		cidr = cidr || strings.Contains(a, "/")
		switch vip, err := parseVIP(a); {
		case err != nil:
			p.errorf("addresses: %q: %v", a, err)
		case vip.zone != "":
			p.warnf("addresses: %q: zone %q dropped", a, vip.zone)
		}
	}
	if cidr && spec.Resolution != v1alpha3.ServiceEntry_NONE && spec.Resolution != v1alpha3.ServiceEntry_STATIC {
		p.errorf("addresses: CIDR ranges need resolution NONE or STATIC, not %s", spec.Resolution)
	}
}

// checkPorts checks the ports and returns their names.
func checkPorts(p *problems, se *networkingv1.ServiceEntry) map[string]bool {
	spec := &se.Spec
	names := map[string]bool{}
	numbers := map[uint32]bool{}
	unaddressedTCP := false
	for i, port := range spec.Ports {
		if port == nil {
			p.errorf("ports[%d]: empty", i)
			continue
		}
		if port.Number < 1 || port.Number > 65535 {
			p.errorf("ports[%d]: number %d out of range 1-65535", i, port.Number)
		} else if numbers[port.Number] {
			p.errorf("ports[%d]: duplicate number %d", i, port.Number)
		}
		numbers[port.Number] = true
		if names[port.Name] {
			p.errorf("ports[%d]: duplicate name %q", i, port.Name)
		}
		names[port.Name] = true
		if !isDNSLabel(port.Name) {
			p.errorf("ports[%d]: name %q is not a DNS-1123 label", i, port.Name)
		}
		if port.TargetPort > 65535 {
			p.errorf("ports[%d]: targetPort %d out of range 1-65535", i, port.TargetPort)
		}
		if port.Protocol != "" && model.ParseProtocol(port.Protocol) == model.Unsupported {
			p.errorf("ports[%d]: unknown protocol %q", i, port.Protocol)
		}
		unaddressedTCP = unaddressedTCP || port.Protocol == "" || port.Protocol == "TCP"
	}
	if unaddressedTCP && len(spec.Addresses) == 0 && !autoAllocates(se) {
		p.warnf("addresses: none, and none are allocated (resolution NONE or auto-allocation turned off): TCP ports cannot be told apart by address")
	}
	return names
}

// checkEndpoints checks each inline endpoint by rule.
func checkEndpoints(p *problems, spec *v1alpha3.ServiceEntry, rule addressRule, ports map[string]bool) {
	for i, ep := range spec.Endpoints {
		if ep == nil {
			p.errorf("endpoints[%d]: empty", i)
			continue
		}
		checkWorkload(p, fmt.Sprintf("endpoints[%d]: ", i), ep, rule, ports)
	}
}

// checkDNS checks the rules of resolutions DNS and DNS_ROUND_ROBIN: hosts
// without wildcards when there are no endpoints (the hosts themselves are
// resolved), endpoints addressed by IP or DNS name, at most one endpoint
// for DNS_ROUND_ROBIN.
func checkDNS(p *problems, spec *v1alpha3.ServiceEntry, ports map[string]bool) {
	if len(spec.Endpoints) == 0 {
		for _, h := range spec.Hosts {
			if checkHost(h) == nil && checkFQDN(h) != nil {
				p.errorf("hosts: %q: a wildcard host needs endpoints with resolution %s: the hosts themselves are resolved", h, spec.Resolution)
				break
			}
		}
	}
	if spec.Resolution == v1alpha3.ServiceEntry_DNS_ROUND_ROBIN && len(spec.Endpoints) > 1 {
		p.errorf("endpoints: resolution DNS_ROUND_ROBIN takes at most one, %d given", len(spec.Endpoints))
	}
	checkEndpoints(p, spec, dnsAddresses, ports)
	if len(spec.Addresses) > 0 && len(spec.Hosts) > 1 {
		for _, port := range spec.Ports {
			if port != nil && overTCP(model.ParseProtocol(port.Protocol)) {
				p.warnf("hosts: several hosts with addresses and a TCP port: the addresses cannot tell them apart")
				break
			}
		}
	}
}

// checkDynamicDNS checks resolution DYNAMIC_DNS: wildcard hosts resolved
// when the client connects, so no addresses and no endpoints; ports of a
// protocol that names the host (HTTP, HTTP2, GRPC, TLS); not
// MESH_INTERNAL through a waypoint.
func checkDynamicDNS(p *problems, se *networkingv1.ServiceEntry) {
	spec := &se.Spec
	for _, h := range spec.Hosts {
		if !model.Hostname(h).IsWildcard() {
			p.errorf("hosts: %q: resolution DYNAMIC_DNS needs wildcard hosts", h)
		}
	}
	if len(spec.Addresses) > 0 {
		p.errorf("addresses: not allowed with resolution DYNAMIC_DNS")
	}
	if len(spec.Endpoints) > 0 {
		p.errorf("endpoints: not allowed with resolution DYNAMIC_DNS")
	}
	if spec.WorkloadSelector != nil {
		p.warnf("workloadSelector: has no use with resolution DYNAMIC_DNS, whose clients resolve the host: it selects nothing")
	}
	for i, port := range spec.Ports {
		if port == nil {
			continue
		}
		switch model.ParseProtocol(port.Protocol) {
		case model.HTTP, model.HTTP2, model.GRPC, model.TLS:
		default:
			p.errorf("ports[%d]: resolution DYNAMIC_DNS needs protocol HTTP, HTTP2, GRPC or TLS, not %s", i, protocolName(port.Protocol))
		}
	}
	switch spec.Location {
	case v1alpha3.ServiceEntry_MESH_EXTERNAL:
	case v1alpha3.ServiceEntry_MESH_INTERNAL:
		if w, ok := se.Labels[labelUseWaypoint]; ok && w != "" && !strings.EqualFold(w, "none") {
			p.errorf("location: MESH_INTERNAL with resolution DYNAMIC_DNS cannot go through a waypoint (%s=%s)", labelUseWaypoint, w)
		}
	default:
		p.errorf("location: %s is not supported with resolution DYNAMIC_DNS", spec.Location)
	}
}

// tellsHostsApart reports whether a protocol names the host a client
// asked for (HTTP's authority, TLS's SNI), so one port can serve several
// hosts.
func tellsHostsApart(p model.Protocol) bool {
	switch p {
	case model.HTTP, model.HTTP2, model.HTTPProxy, model.GRPC, model.GRPCWeb, model.HTTPS, model.TLS:
		return true
	}
	return false
}

// overTCP reports whether a protocol is carried over plain TCP listeners
// that tell services apart by address.
func overTCP(p model.Protocol) bool {
	switch p {
	case model.TCP, model.HTTPS, model.TLS, model.Mongo, model.Redis, model.MySQL:
		return true
	}
	return false
}

func protocolName(p string) string {
	if p == "" {
		return "unset"
	}
	return p
}

// vip is a parsed ServiceEntry address.
type vip struct {
	prefix netip.Prefix
	zone   string // an IPv6 zone dropped from the address
}

// parseVIP reads a ServiceEntry address: an IP (a single-address prefix;
// an IPv6 zone is dropped and returned), or, with exactly one "/", a CIDR
// range, normalised to its network address.
func parseVIP(s string) (vip, error) {
	if strings.Count(s, "/") == 1 {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return vip{}, errors.New("not a valid CIDR range")
		}
		return vip{prefix: p.Masked()}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return vip{}, errors.New("not a valid IP")
	}
	zone := a.Zone()
	a = a.WithZone("")
	return vip{prefix: netip.PrefixFrom(a, a.BitLen()), zone: zone}, nil
}

// autoAllocates reports whether an entry's hosts may get auto-allocated
// VIPs: it declares no addresses, its resolution is not NONE, and it does
// not opt out with the label networking.istio.io/enable-autoallocate-ip:
// "false" (any case).
func autoAllocates(se *networkingv1.ServiceEntry) bool {
	v, ok := se.Labels[labelAutoAllocate]
	return len(se.Spec.Addresses) == 0 && se.Spec.Resolution != v1alpha3.ServiceEntry_NONE && !(ok && strings.EqualFold(v, "false"))
}
