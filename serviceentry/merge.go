package serviceentry

import (
	"cmp"
	"maps"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// unmerged is a port of a younger entry of a host that the host's
// service does not serve as declared, and why: its entry cannot merge
// with the winner (differs names what differs), or the number or the
// name is already the host's, held by a port of holder.
type unmerged struct {
	entry   *entry
	port    model.Port
	differs []string
	holder  *entry
	held    model.Port
}

// mergeService makes the service of one host from the entries of one
// namespace that declare it, es, in precedence order (the winner first),
// as Istio's sidecar scope merges a host's services
// (pilot/pkg/model/sidecar.go, appendSidecarServices): the winner's
// service, to whose ports are appended those of each younger entry in
// precedence order, each in declaration order. A younger entry merges
// only when it shares the winner's resolution, labels, workloadSelector
// and exportTo (Istio's canMergeServices); everything else (location,
// addresses, subject alternative names, creation time) is the winner's
// alone. A port merges unless the host already has its number (the
// older port stays, as in Istio) or its name (a service's port names are
// unique, see model.Port); a merged port names its entry in Origin.
//
// It returns the service, the winner's own when nothing merged, and the
// ports of younger entries that the service does not have as declared
// (name, number and protocol), in the order of es and their ports.
func mergeService(host model.Hostname, es []*entry) (*model.Service, []unmerged) {
	winner := es[0].service(host)
	if len(es) == 1 {
		return winner, nil
	}
	ports := slices.Clone(winner.Ports)
	holders := slices.Repeat([]*entry{es[0]}, len(ports))
	var skipped []unmerged
	for _, e := range es[1:] {
		differs := mergeBlockers(winner, e.service(host))
		for _, p := range e.ports {
			i := slices.IndexFunc(ports, func(q model.Port) bool { return q.Port == p.Port })
			if i >= 0 && ports[i].Name == p.Name && ports[i].Protocol == p.Protocol {
				continue // the host serves it as declared
			}
			if i < 0 {
				i = slices.IndexFunc(ports, func(q model.Port) bool { return q.Name == p.Name })
			}
			switch {
			case len(differs) > 0:
				skipped = append(skipped, unmerged{entry: e, port: p, differs: differs})
			case i >= 0:
				skipped = append(skipped, unmerged{entry: e, port: p, holder: holders[i], held: ports[i]})
			default:
				p.Origin = e.ref.Name
				ports = append(ports, p)
				holders = append(holders, e)
			}
		}
	}
	if len(ports) == len(winner.Ports) {
		return winner, skipped
	}
	svc := *winner
	svc.Ports = ports
	return &svc, skipped
}

// mergeBlockers returns the attributes in which a younger entry's
// service differs from the winner's so that Istio does not merge their
// ports (canMergeServices); nil when they merge. Nil and empty maps and
// lists are equal, as in Istio; exportTo is compared as a set (both are
// sorted and compacted).
func mergeBlockers(winner, s *model.Service) []string {
	var out []string
	if s.Resolution != winner.Resolution {
		out = append(out, "resolution")
	}
	if !maps.Equal(s.Labels, winner.Labels) {
		out = append(out, "labels")
	}
	if !maps.Equal(s.Selector, winner.Selector) {
		out = append(out, "workloadSelector")
	}
	if !slices.Equal(s.ExportTo, winner.ExportTo) {
		out = append(out, "exportTo")
	}
	return out
}

// mergeEndpoints makes the endpoints of one service key from the entries
// that declare it, es, in precedence order (the oldest first), for the
// ports of svc, the key's merged service (see mergeService). It returns
// them sorted (model.CompareEndpoints, ties in the order merged). An
// entry's endpoints for a port are those of the service's port of that
// name, as Istio's EDS picks them by name; those of a name the service
// lacks are left out (mergeService reports the port).
//
//   - One endpoint per workload and port, not per address: a Pod or
//     WorkloadEntry that several of the entries select counts once, and
//     two workloads at one address (host-network Pods) are two endpoints.
//     An inline endpoint, and a DNS entry's own host, belong to their
//     entry: an entry listing one address twice, or two entries listing
//     the same address, contribute one endpoint each, as in Istio.
//   - A DNS_ROUND_ROBIN entry adds an endpoint for a port only while no
//     endpoint merged before it (its own or an older entry's) serves the
//     port, as in Istio: a client resolves a single name.
func mergeEndpoints(svc *model.Service, es []*entry) []*model.Endpoint {
	type workloadPort struct {
		w    model.WorkloadKey
		port string
	}
	var eps []*model.Endpoint
	seen := map[workloadPort]bool{}
	served := map[string]bool{}
	for _, e := range es {
		for _, ep := range e.endpoints(svc.Hostname) {
			if _, ok := svc.PortByName(ep.ServicePortName); !ok {
				continue
			}
			if e.res == model.DNSRoundRobin && served[ep.ServicePortName] {
				continue
			}
			if ep.WorkloadName != "" {
				k := workloadPort{model.WorkloadKey{Cluster: ep.Cluster, Kind: ep.WorkloadKind, Namespace: ep.WorkloadNamespace, Name: ep.WorkloadName}, ep.ServicePortName}
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			served[ep.ServicePortName] = true
			eps = append(eps, ep)
		}
	}
	slices.SortStableFunc(eps, compareMerged)
	return eps
}

// compareMerged orders merged endpoints as the store does
// (model.CompareEndpoints), then endpoints at one place by workload, so
// that the order is a function of the endpoints alone.
func compareMerged(a, b *model.Endpoint) int {
	return cmp.Or(model.CompareEndpoints(a, b), cmp.Compare(a.WorkloadKind, b.WorkloadKind),
		cmp.Compare(a.WorkloadNamespace, b.WorkloadNamespace), cmp.Compare(a.WorkloadName, b.WorkloadName))
}
