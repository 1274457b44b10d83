package address

import (
	"cmp"
	"iter"
	"net/netip"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/internal/cow"
	"github.com/meshreg/meshreg/model"
)

// Snapshot is the index at one generation. It is immutable and safe for
// concurrent use; the messages it hands out are shared and must not be
// modified.
type Snapshot struct {
	gen    uint64
	synced bool
	// addrs holds every resource by key: a workload by its uid, a
	// service by "namespace/hostname".
	addrs cow.Map[string, *workloadapi.Address]
	// byIP holds the keys of the resources at each "network/IP": a
	// workload's addresses, a service's VIPs. bySvc holds the workloads
	// that back each service, by the service's key.
	byIP, bySvc cow.Map[string, []string]
	// diags are what the index could not use, sorted.
	diags []model.Diagnostic
}

// Generation is the snapshot's generation: 0 before the index's first
// state, then one more with each state it publishes.
func (s *Snapshot) Generation() uint64 { return s.gen }

// Synced reports whether the snapshot holds the source's initial state
// and the metadata's. Every snapshot after a synced one is synced.
func (s *Snapshot) Synced() bool { return s.synced }

// Len returns the number of resources.
func (s *Snapshot) Len() int { return s.addrs.Len() }

// Get returns the resource with the given key (a workload's uid, or a
// service's "namespace/hostname"), or nil.
func (s *Snapshot) Get(key string) *workloadapi.Address {
	a, _ := s.addrs.Get(key)
	return a
}

// Lookup returns the resources a name stands for, as Istio answers
// ztunnel's on-demand requests: a workload's uid gives that workload; a
// "network/IP" the workloads with that address, sorted by uid, or when
// there are none the service with that VIP (the first by key); a service
// (by "namespace/hostname" or VIP) comes with the workloads that back
// it, sorted by uid. Each comes with its key; nothing for a name that
// stands for nothing.
func (s *Snapshot) Lookup(name string) []Resource {
	a, ok := s.addrs.Get(name)
	if ok && a.GetWorkload() != nil {
		return []Resource{{Key: name, Address: a}}
	}
	key := name
	if !ok {
		var svc string
		for _, k := range s.at(name) {
			if a, _ := s.addrs.Get(k); a.GetWorkload() != nil {
				return s.resources(s.workloadsAt(name))
			} else if svc == "" {
				svc = k
			}
		}
		if svc == "" {
			return nil
		}
		key = svc
	}
	backing, _ := s.bySvc.Get(key)
	return s.resources(append([]string{key}, backing...))
}

func (s *Snapshot) at(name string) []string {
	keys, _ := s.byIP.Get(name)
	return keys
}

// workloadsAt returns the keys of the workloads at a "network/IP".
func (s *Snapshot) workloadsAt(name string) []string {
	var out []string
	for _, k := range s.at(name) {
		if a, _ := s.addrs.Get(k); a.GetWorkload() != nil {
			out = append(out, k)
		}
	}
	return out
}

func (s *Snapshot) resources(keys []string) []Resource {
	out := make([]Resource, 0, len(keys))
	for _, k := range keys {
		if a, ok := s.addrs.Get(k); ok {
			out = append(out, Resource{Key: k, Address: a})
		}
	}
	return out
}

// Aliases returns the names a resource also goes by, as Istio sends them
// with an on-demand resource: a workload's "network/IP" for each of its
// addresses, a service's for each VIP ("network/IP/length" for a range).
func Aliases(a *workloadapi.Address) []string {
	if a.GetWorkload() != nil {
		return ipKeys(a)
	}
	var out []string
	for _, na := range a.GetService().GetAddresses() {
		ip, ok := netip.AddrFromSlice(na.Address)
		if !ok {
			continue
		}
		k := IPKey(na.Network, ip)
		if na.Length != nil {
			k += "/" + uitoa(*na.Length)
		}
		out = append(out, k)
	}
	return out
}

// Resource is one resource of the index with its key.
type Resource struct {
	Key     string
	Address *workloadapi.Address
}

// All returns every resource, in no particular order.
func (s *Snapshot) All() iter.Seq2[string, *workloadapi.Address] { return s.addrs.All() }

// Keys returns every resource key, sorted.
func (s *Snapshot) Keys() []string {
	out := make([]string, 0, s.addrs.Len())
	for k := range s.addrs.All() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Workloads returns every workload, sorted by uid.
func (s *Snapshot) Workloads() []*workloadapi.Workload {
	var out []*workloadapi.Workload
	for _, a := range s.addrs.All() {
		if w := a.GetWorkload(); w != nil {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *workloadapi.Workload) int { return strings.Compare(a.Uid, b.Uid) })
	return out
}

// Services returns every service, sorted by namespace, then hostname.
func (s *Snapshot) Services() []*workloadapi.Service {
	var out []*workloadapi.Service
	for _, a := range s.addrs.All() {
		if svc := a.GetService(); svc != nil {
			out = append(out, svc)
		}
	}
	slices.SortFunc(out, func(a, b *workloadapi.Service) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Hostname, b.Hostname))
	})
	return out
}

// Diagnostics returns what the index could not use (a waypoint that is
// not there, a Gateway without an address, a malformed label), sorted
// by model.CompareDiagnostics.
func (s *Snapshot) Diagnostics() []model.Diagnostic { return s.diags }

// IPKey returns the name ztunnel uses for an address on a network:
// "network/IP".
func IPKey(network string, ip netip.Addr) string { return network + "/" + ip.String() }
