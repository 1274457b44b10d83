package serviceentry

import (
	"net/netip"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

// entry is a valid ServiceEntry, converted. The controller's worker owns
// it: selected is recomputed in place when the workloads it selects
// change.
type entry struct {
	ref      nsName
	created  time.Time
	res      model.Resolution
	ports    []model.Port
	services []*model.Service // one per host, in host order
	// selector is the workloadSelector's labels; nil without one.
	selector map[string]string
	// fixed holds each host's endpoints from the entry itself: its
	// inline endpoints, or the host itself for DNS entries without
	// endpoints and selector.
	fixed map[model.Hostname][]*model.Endpoint
	// selectedSlots are the slots of the workloads the selector selects,
	// sorted by key (model.WorkloadKey.Compare); selected holds their
	// endpoints, in that order.
	selectedSlots []*slot
	selected      []*model.Endpoint
	// autoVIPs: the entry's hosts may have auto VIPs (autoAllocates);
	// statusVIPs are those its status gives each host (see
	// autoaddress.go).
	autoVIPs   bool
	statusVIPs map[model.Hostname][]netip.Addr
	// warnings are problems that did not stop the entry being used.
	warnings []string
}

// nsView is what an entry's conversion reads of its namespace: its
// traffic distribution annotation, and the visibility the mesh's
// serviceEntryVisibility gives its entries.
type nsView struct {
	traffic    string
	visibility model.Visibility
}

// newEntry validates and converts a ServiceEntry of a namespace;
// selected endpoints are left for the caller to fill in. An invalid
// entry returns the validation error.
func newEntry(se *networkingv1.ServiceEntry, c convCtx, ns nsView) (*entry, error) {
	warnings, err := validateServiceEntry(se)
	if err != nil {
		return nil, err
	}
	traffic, terr := model.ParseTrafficDistribution("", se.Annotations[model.TrafficDistributionAnnotation], ns.traffic)
	if terr != nil {
		warnings = append(warnings, terr.Error())
	}
	svcs := convertServices(se, c.Cluster, traffic)
	for _, s := range svcs {
		s.Visibility = ns.visibility
	}
	e := &entry{
		ref:      nsName{se.Namespace, se.Name},
		created:  se.CreationTimestamp.Time,
		res:      convertResolution(se.Spec.Resolution),
		ports:    convertPorts(se),
		services: svcs,
		fixed:    map[model.Hostname][]*model.Endpoint{},
		warnings: warnings,
		autoVIPs: autoAllocates(se),
	}
	if e.autoVIPs {
		e.statusVIPs = statusAddresses(se)
	}
	if se.Spec.WorkloadSelector != nil && e.res != model.DynamicDNS {
		e.selector = svcs[0].Selector
	}
	switch {
	case len(se.Spec.Endpoints) > 0:
		eps := inlineEndpoints(se, e.ports, c)
		for _, s := range svcs {
			e.fixed[s.Hostname] = eps
		}
	case e.selector == nil && (e.res == model.DNS || e.res == model.DNSRoundRobin):
		for _, s := range svcs {
			e.fixed[s.Hostname] = hostEndpoints(se.Name, s.Hostname, e.ports, c)
		}
	}
	return e, nil
}

// keys returns the service keys the entry declares.
func (e *entry) keys() []model.ServiceKey {
	out := make([]model.ServiceKey, len(e.services))
	for i, s := range e.services {
		out[i] = s.Key()
	}
	return out
}

// service returns the entry's service for a host.
func (e *entry) service(host model.Hostname) *model.Service {
	for _, s := range e.services {
		if s.Hostname == host {
			return s
		}
	}
	return nil
}

// endpoints returns the entry's endpoints for a host: its own, then the
// selected workloads'. A DNS_ROUND_ROBIN entry's are cut to one per port
// when merged (see mergeEndpoints).
func (e *entry) endpoints(host model.Hostname) []*model.Endpoint {
	return append(append([]*model.Endpoint(nil), e.fixed[host]...), e.selected...)
}

// selects reports whether the entry selects a workload: same namespace,
// and the workloadSelector's labels match.
func (e *entry) selects(w *model.WorkloadInstance) bool {
	return w != nil && e.selector != nil && w.Namespace == e.ref.Namespace && model.SelectorMatches(e.selector, w.Endpoint.Labels)
}

// statusAddresses returns the VIPs an entry's status.addresses give its
// hosts, as Istio reads them: per host the last IPv4 and the last IPv6
// listed, IPv4 first; addresses that do not parse are skipped.
func statusAddresses(se *networkingv1.ServiceEntry) map[model.Hostname][]netip.Addr {
	var v4, v6 map[model.Hostname]netip.Addr
	for _, sa := range se.Status.Addresses {
		a, err := netip.ParseAddr(sa.GetValue())
		if err != nil {
			continue
		}
		m := &v4
		if !a.Is4() {
			m = &v6
		}
		if *m == nil {
			*m = map[model.Hostname]netip.Addr{}
		}
		(*m)[model.Hostname(sa.GetHost())] = a
	}
	var out map[model.Hostname][]netip.Addr
	add := func(h model.Hostname, a netip.Addr) {
		if out == nil {
			out = map[model.Hostname][]netip.Addr{}
		}
		out[h] = append(out[h], a)
	}
	for h, a := range v4 {
		add(h, a)
	}
	for h, a := range v6 {
		add(h, a)
	}
	return out
}
