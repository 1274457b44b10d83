package serviceentry

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
)

// unixPrefix starts an endpoint address that is a Unix domain socket.
const unixPrefix = "unix://"

// addressRule says which addresses a workload may have, by where it is
// declared: Istio's webhook checks a WorkloadEntry and the endpoints of a
// STATIC or a DNS ServiceEntry each in its own way.
type addressRule uint8

const (
	// workloadEntryAddresses: an IP, a DNS name or a unix socket, or
	// none with a network (a remote-network workload).
	workloadEntryAddresses addressRule = iota
	// staticAddresses: an IP or a unix socket, or none with a network.
	staticAddresses
	// dnsAddresses: an IP or a DNS name.
	dnsAddresses
)

// validateWorkloadEntry checks a WorkloadEntry as Istio's webhook does: an
// address (IP, DNS name or unix:// path) or a network, port names and
// numbers, labels. It returns the warnings of a usable entry, and every
// violation in one error.
func validateWorkloadEntry(we *networkingv1.WorkloadEntry) (warnings []string, err error) {
	var p problems
	checkWorkload(&p, "", &we.Spec, workloadEntryAddresses, nil)
	return p.result()
}

// checkWorkload checks the fields a WorkloadEntry and a ServiceEntry
// endpoint share, naming each problem with field (e.g. "endpoints[0]: ";
// "" for a WorkloadEntry). servicePorts, when not nil, are the port names
// an endpoint's ports may use.
func checkWorkload(p *problems, field string, w *v1alpha3.WorkloadEntry, rule addressRule, servicePorts map[string]bool) {
	addr := w.Address
	unix := strings.HasPrefix(addr, unixPrefix)
	switch {
	case rule == dnsAddresses && addr == "":
		p.errorf("%saddress: none given; resolution DNS needs an IP or a DNS name", field)
	case rule == dnsAddresses && unix:
		p.errorf("%saddress %q: resolution DNS cannot resolve a unix socket (STATIC can)", field, addr)
	case rule == dnsAddresses:
		if _, err := netip.ParseAddr(addr); err != nil {
			if ferr := checkFQDN(addr); ferr != nil {
				p.errorf("%saddress %q: resolution DNS needs an IP or a DNS name: %v", field, addr, ferr)
			}
		}
	case addr == "" && w.Network == "":
		p.errorf("%saddress: neither an address nor a network given", field)
	case addr == "":
		p.warnf("%saddress: none, reached through network %q's gateway", field, w.Network)
	case unix:
		if err := checkUnixPath(addr[len(unixPrefix):]); err != nil {
			p.errorf("%saddress %q: %v", field, addr, err)
		}
		if len(w.Ports) > 0 {
			p.errorf("%sports: not allowed with unix socket address %q", field, addr)
		}
		if servicePorts != nil && len(servicePorts) != 1 {
			p.errorf("%saddress %q: a unix socket endpoint needs an entry with exactly one port", field, addr)
		}
	default:
		if _, err := netip.ParseAddr(addr); err != nil {
			switch {
			case rule == staticAddresses:
				p.errorf("%saddress %q: resolution STATIC needs an IP or unix:// address", field, addr)
			case checkFQDN(addr) != nil:
				p.errorf("%saddress %q is neither an IP, a DNS name nor a unix:// path", field, addr)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Ports)) {
		if servicePorts != nil && !servicePorts[name] {
			p.errorf("%sport %q is not a port of the entry", field, name)
		}
		if !isDNSLabel(name) {
			p.errorf("%sports: name %q is not a DNS-1123 label", field, name)
		}
		if n := w.Ports[name]; n < 1 || n > 65535 {
			p.errorf("%sports: %q: %d out of range 1-65535", field, name, n)
		}
	}
	for _, err := range labelErrors(w.Labels) {
		p.errorf("%slabels: %v", field, err)
	}
}

// problems collects what validation finds in one object: errors, which
// make it unusable, and warnings, which do not.
type problems struct {
	errs     []string
	warnings []string
}

func (p *problems) errorf(format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}
func (p *problems) warnf(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

// result returns the warnings, and the errors as one error on one line;
// an object with errors has no warnings worth reporting.
func (p *problems) result() ([]string, error) {
	if len(p.errs) > 0 {
		return nil, invalidError(strings.Join(p.errs, "; "))
	}
	return p.warnings, nil
}

// invalidError is the validation error of one object: every rule it
// breaks, on one line.
type invalidError string

func (e invalidError) Error() string { return string(e) }
