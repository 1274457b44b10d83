package serviceentry

import (
	"cmp"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// mergeEndpoints makes the endpoints of one service key from the entries
// that declare it, es, in precedence order (the oldest first), for the
// ports of svc, the oldest entry's service. It returns them sorted
// (model.CompareEndpoints, ties in the order merged), and, per entry by
// index, the names of the ports whose endpoints were left out because svc
// lacks them.
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
func mergeEndpoints(svc *model.Service, es []*entry) (eps []*model.Endpoint, dropped map[int][]string) {
	type workloadPort struct {
		w    model.WorkloadKey
		port string
	}
	seen := map[workloadPort]bool{}
	served := map[string]bool{}
	for i, e := range es {
		host := svc.Hostname
		for _, ep := range e.endpoints(host) {
			if _, ok := svc.PortByName(ep.ServicePortName); !ok {
				if !slices.Contains(dropped[i], ep.ServicePortName) {
					if dropped == nil {
						dropped = map[int][]string{}
					}
					dropped[i] = append(dropped[i], ep.ServicePortName)
				}
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
	return eps, dropped
}

// compareMerged orders merged endpoints as the store does
// (model.CompareEndpoints), then endpoints at one place by workload, so
// that the order is a function of the endpoints alone.
func compareMerged(a, b *model.Endpoint) int {
	return cmp.Or(model.CompareEndpoints(a, b), cmp.Compare(a.WorkloadKind, b.WorkloadKind),
		cmp.Compare(a.WorkloadNamespace, b.WorkloadNamespace), cmp.Compare(a.WorkloadName, b.WorkloadName))
}
