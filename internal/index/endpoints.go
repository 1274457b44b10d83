package index

import (
	"cmp"
	"slices"

	"github.com/meshreg/meshreg/internal/ipmap"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Owner is the service that indexed endpoints belong to: its key, and the
// service itself while it is present. A store keeps one Owner per
// service whose endpoints it holds, where it keeps their lists, and sets
// Service (under its lock) as the service comes, changes and goes: the
// index reaches the service through the Owner, so a change of the service
// re-indexes nothing.
type Owner struct {
	Key     model.ServiceKey
	Service *model.Service
}

// EndpointsByIP indexes endpoints by each of their addresses, with the
// Owner each belongs to. A store indexes only the endpoints of present
// services, so that every Owner reached through the index has its
// Service. One endpoint may belong to several owners (a Service and its
// ClusterSet host share the endpoints that do not differ), so entries
// are told apart by owner and endpoint. The zero value is empty and
// ready to use.
type EndpointsByIP struct {
	// m holds each address's entries. They are the index's own (a query
	// copies what it reads from one), so they are changed in place.
	m ipmap.Map[[]ipRef]
}

// ipRef is an entry of the index. Pointing to the Owner instead of
// holding the 32-byte key keeps an entry at 16 bytes.
type ipRef struct {
	owner *Owner
	ep    *model.Endpoint
}

// Reserve makes the empty index ready for about n addresses.
func (x *EndpointsByIP) Reserve(n int) { x.m.Reserve(n) }

// Add indexes eps as o's.
func (x *EndpointsByIP) Add(o *Owner, eps []*model.Endpoint) {
	for _, ep := range eps {
		for _, ip := range ep.Addresses {
			x.m.Set(ip, append(x.m.Get(ip), ipRef{owner: o, ep: ep}))
		}
	}
}

// Remove unindexes eps as o's.
func (x *EndpointsByIP) Remove(o *Owner, eps []*model.Endpoint) {
	for _, ep := range eps {
		for _, ip := range ep.Addresses {
			refs := slices.DeleteFunc(x.m.Get(ip), func(r ipRef) bool { return r.ep == ep && r.owner == o })
			if len(refs) == 0 {
				x.m.Delete(ip)
			} else {
				x.m.Set(ip, refs)
			}
		}
	}
}

// Replace moves the index from o's list prev to its list eps, both sorted
// by model.CompareEndpoints. An endpoint in both lists (the same pointer:
// registries pass unchanged endpoints on as they were) keeps its entries,
// so a change re-indexes only what changed. Endpoints that compare equal
// without being the same are handled as a group, in whatever order each
// list holds them.
func (x *EndpointsByIP) Replace(o *Owner, prev, eps []*model.Endpoint) {
	for len(prev) > 0 || len(eps) > 0 {
		c := 0
		switch {
		case len(prev) == 0:
			c = 1
		case len(eps) == 0:
			c = -1
		case prev[0] == eps[0]:
			prev, eps = prev[1:], eps[1:]
			continue
		default:
			c = model.CompareEndpoints(prev[0], eps[0])
		}
		switch {
		case c < 0:
			x.Remove(o, prev[:1])
			prev = prev[1:]
		case c > 0:
			x.Add(o, eps[:1])
			eps = eps[1:]
		default:
			i := 1
			for i < len(prev) && model.CompareEndpoints(prev[i], prev[0]) == 0 {
				i++
			}
			j := 1
			for j < len(eps) && model.CompareEndpoints(eps[j], eps[0]) == 0 {
				j++
			}
			if i == 1 && j == 1 && slices.Equal(prev[0].Addresses, eps[0].Addresses) {
				// One endpoint replaced by another at the same
				// addresses (a health or metadata change): it takes
				// the old one's place in each address's entry.
				x.replaceOne(o, prev[0], eps[0])
				prev, eps = prev[1:], eps[1:]
				continue
			}
			for _, ep := range prev[:i] {
				if !slices.Contains(eps[:j], ep) {
					x.Remove(o, []*model.Endpoint{ep})
				}
			}
			for _, ep := range eps[:j] {
				if !slices.Contains(prev[:i], ep) {
					x.Add(o, []*model.Endpoint{ep})
				}
			}
			prev, eps = prev[i:], eps[j:]
		}
	}
}

// replaceOne puts ep in prev's place, prev and ep having the same
// addresses.
func (x *EndpointsByIP) replaceOne(o *Owner, prev, ep *model.Endpoint) {
	for _, ip := range ep.Addresses {
		refs := x.m.Get(ip)
		if k := slices.IndexFunc(refs, func(r ipRef) bool { return r.ep == prev && r.owner == o }); k >= 0 {
			refs[k].ep = ep
		} else {
			x.m.Set(ip, append(refs, ipRef{owner: o, ep: ep}))
		}
	}
}

// ProxyTargets returns the service ports served by the indexed endpoints
// with one of the query's IPs, narrowed as it says (see
// registry.ProxyQuery), sorted by hostname, namespace, port and target
// port, without duplicates (the order registry.Discovery.ProxyTargets
// promises). A ClusterSet host
// (model.Hostname.IsClusterSet) is no target: a workload serves its
// Services, as Istio's targets are (the ClusterSet host shares their
// endpoints). Finding nothing allocates nothing.
func (x *EndpointsByIP) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	var out []model.ServiceTarget
	for _, ip := range q.IPs {
		refs := x.m.Get(ip)
		for _, ref := range refs {
			if (q.Namespace != "" && ref.owner.Key.Namespace != q.Namespace) || ref.owner.Key.Hostname.IsClusterSet() {
				continue
			}
			svc := ref.owner.Service // indexed endpoints belong to present services
			if q.Cluster != "" && svc.Provider == model.Kubernetes && ref.ep.Cluster != q.Cluster {
				continue
			}
			port, ok := svc.PortByName(ref.ep.ServicePortName)
			if !ok {
				continue
			}
			if out == nil {
				out = make([]model.ServiceTarget, 0, len(refs))
			}
			out = append(out, model.ServiceTarget{Service: svc, Port: port, TargetPort: ref.ep.Port})
		}
	}
	return sortTargets(out)
}

// sortTargets sorts targets by hostname, namespace, port and target port
// and drops duplicates.
func sortTargets(ts []model.ServiceTarget) []model.ServiceTarget {
	if len(ts) < 2 {
		return ts
	}
	c := func(a, b model.ServiceTarget) int {
		if c := compareServices(a.Service, b.Service); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Port.Port, b.Port.Port); c != 0 {
			return c
		}
		return cmp.Compare(a.TargetPort, b.TargetPort)
	}
	slices.SortFunc(ts, c)
	return slices.CompactFunc(ts, func(a, b model.ServiceTarget) bool { return c(a, b) == 0 })
}
