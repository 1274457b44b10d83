package serviceentry

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/hashicorp/go-multierror"
	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

// unixPrefix starts an endpoint address that is a Unix domain socket.
const unixPrefix = "unix://"

// validateServiceEntry checks the rules Istio's admission webhook applies
// to a ServiceEntry (see ARCHITECTURE.md decision 9), and returns every violation
// of one object in one error, or nil. Each message names its rule.
func validateServiceEntry(se *networkingv1.ServiceEntry) error {
	var errs *multierror.Error
	add := func(format string, args ...any) { errs = multierror.Append(errs, fmt.Errorf(format, args...)) }
	spec := &se.Spec

	if len(spec.Hosts) == 0 {
		add("hosts: none given")
	}
	hosts := map[string]bool{}
	for _, h := range spec.Hosts {
		if err := validateHost(h, true); err != nil {
			add("hosts: %q: %w", h, err)
		} else if hosts[h] {
			add("hosts: %q: duplicate", h)
		}
		hosts[h] = true
	}
	for _, a := range spec.Addresses {
		if _, err := parseVIP(a); err != nil {
			add("addresses: %q: %w", a, err)
		}
	}

	portNames := map[string]bool{}
	portNumbers := map[uint32]bool{}
	for i, p := range spec.Ports {
		if p == nil {
			add("ports[%d]: empty", i)
			continue
		}
		if p.Number < 1 || p.Number > 65535 {
			add("ports[%d]: number %d out of range 1-65535", i, p.Number)
		} else if portNumbers[p.Number] {
			add("ports[%d]: duplicate number %d", i, p.Number)
		}
		portNumbers[p.Number] = true
		if portNames[p.Name] {
			add("ports[%d]: duplicate name %q", i, p.Name)
		}
		portNames[p.Name] = true
		if p.TargetPort > 65535 {
			add("ports[%d]: targetPort %d out of range 1-65535", i, p.TargetPort)
		}
		if p.Protocol != "" && model.ParseProtocol(p.Protocol) == model.Unsupported {
			add("ports[%d]: unknown protocol %q", i, p.Protocol)
		}
	}

	switch spec.Resolution {
	case v1alpha3.ServiceEntry_NONE, v1alpha3.ServiceEntry_STATIC, v1alpha3.ServiceEntry_DNS, v1alpha3.ServiceEntry_DNS_ROUND_ROBIN:
	default:
		add("resolution: %s is not supported", spec.Resolution)
	}
	if spec.WorkloadSelector != nil && len(spec.Endpoints) > 0 {
		add("workloadSelector: not allowed together with endpoints")
	}
	if spec.Resolution == v1alpha3.ServiceEntry_NONE && len(spec.Endpoints) > 0 {
		add("endpoints: not allowed with resolution NONE")
	}
	if isDNS(spec.Resolution) && len(spec.Endpoints) == 0 && spec.WorkloadSelector == nil {
		for _, h := range spec.Hosts {
			if strings.HasPrefix(h, "*") {
				add("hosts: %q: a wildcard host cannot be resolved by DNS without endpoints", h)
			}
		}
	}
	for i, ep := range spec.Endpoints {
		if ep == nil {
			add("endpoints[%d]: empty", i)
			continue
		}
		for _, err := range workloadSpecErrors(ep) {
			add("endpoints[%d]: %w", i, err)
		}
		if spec.Resolution == v1alpha3.ServiceEntry_STATIC && ep.Address != "" && !strings.HasPrefix(ep.Address, unixPrefix) {
			if _, err := netip.ParseAddr(ep.Address); err != nil {
				add("endpoints[%d]: address %q: resolution STATIC needs an IP or unix:// address", i, ep.Address)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(ep.Ports)) {
			if !portNames[name] {
				add("endpoints[%d]: port %q is not a port of the entry", i, name)
			}
		}
	}
	return finish(errs)
}

// validateWorkloadEntry checks a WorkloadEntry: an address (IP, DNS name
// or unix:// path) or a network, and ports in range.
func validateWorkloadEntry(we *networkingv1.WorkloadEntry) error {
	var errs *multierror.Error
	for _, err := range workloadSpecErrors(&we.Spec) {
		errs = multierror.Append(errs, err)
	}
	return finish(errs)
}

// workloadSpecErrors checks the fields a WorkloadEntry and a ServiceEntry
// endpoint share.
func workloadSpecErrors(w *v1alpha3.WorkloadEntry) []error {
	var errs []error
	switch a := w.Address; {
	case a == "" && w.Network == "":
		errs = append(errs, errors.New("address: neither an address nor a network given"))
	case a == "":
		// A remote-network workload, reached through its network's
		// gateway.
	case strings.HasPrefix(a, unixPrefix):
		if len(a) == len(unixPrefix) {
			errs = append(errs, fmt.Errorf("address: %q: empty unix socket path", a))
		}
		if len(w.Ports) > 0 {
			errs = append(errs, fmt.Errorf("ports: not allowed with unix socket address %q", a))
		}
	default:
		if _, err := netip.ParseAddr(a); err != nil {
			if herr := validateHost(a, false); herr != nil {
				errs = append(errs, fmt.Errorf("address: %q is neither an IP, a DNS name nor a unix:// path", a))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Ports)) {
		if p := w.Ports[name]; p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("ports: %q: %d out of range 1-65535", name, w.Ports[name]))
		}
	}
	return errs
}

// validateHost checks a DNS name: at most 253 characters, dot-separated
// labels of 1 to 63 letters, digits and inner hyphens. With wildcard, a
// leading "*." label is allowed (a bare "*" is not: it would capture all
// traffic).
func validateHost(h string, wildcard bool) error {
	if h == "" {
		return errors.New("empty")
	}
	if h == "*" {
		return errors.New(`"*" alone is not allowed`)
	}
	name := h
	if wildcard && strings.HasPrefix(h, "*.") {
		name = h[2:]
	}
	if len(h) > 253 {
		return errors.New("longer than 253 characters")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("each dot-separated label must have 1 to 63 characters")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' && i > 0 && i < len(label)-1
			if !ok {
				return fmt.Errorf("label %q: only letters, digits and inner hyphens are allowed", label)
			}
		}
	}
	return nil
}

// parseVIP reads a ServiceEntry address: an IP (a single-address prefix)
// or a CIDR range, normalised to its network address.
func parseVIP(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return netip.Prefix{}, errors.New("zoned addresses are not allowed")
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	if !strings.Contains(s, "/") {
		return netip.Prefix{}, errors.New("neither an IP nor a CIDR")
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("bad CIDR")
	}
	return p.Masked(), nil
}

func isDNS(r v1alpha3.ServiceEntry_Resolution) bool {
	return r == v1alpha3.ServiceEntry_DNS || r == v1alpha3.ServiceEntry_DNS_ROUND_ROBIN
}

// finish renders the problems of one object on one line.
func finish(errs *multierror.Error) error {
	if errs == nil {
		return nil
	}
	errs.ErrorFormat = func(es []error) string {
		parts := make([]string, len(es))
		for i, e := range es {
			parts[i] = e.Error()
		}
		return strings.Join(parts, "; ")
	}
	return errs
}
