package kube

import (
	"cmp"
	"net/netip"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// sliceInfo is the controller's cached form of an EndpointSlice: the
// endpoint slice informer's transform (stripSlice) turns every slice into
// one. It keeps what mergeSlices reads, with addresses parsed, the ports
// sorted by name and the conditions packed, in a few allocations per
// slice instead of several per endpoint; its labels are not kept (the
// service name is a field of its own). A sliceInfo is never modified
// once built.
type sliceInfo struct {
	objectMeta
	created metav1.Time
	// service is the Service the slice belongs to (sliceService); ""
	// for none.
	service     string
	addressType discoveryv1.AddressType
	endpoints   []sliceEndpointInfo
	// ports are the slice's port numbers by name (see slicePorts);
	// badPorts are the ports numbered out of range, reported by
	// mergeSlices.
	ports    portNumbers
	badPorts []badPort
	// badAddrs are the malformed addresses of the slice's endpoints, in
	// order, reported and skipped by mergeSlices.
	badAddrs []string
	// foreignRefs are the Pod targetRefs that name a pod of another
	// namespace, in order: mergeSlices reports them, and their endpoints
	// are taken as naming no pod, so that no namespace lends identity to
	// another's slices.
	foreignRefs []foreignRef
	// claims are the slice's addresses, one each, sorted: the address
	// and the endpoint listing it (the first, for an address listed
	// twice, as Istio reads it). mergeSlices merges the claims of a
	// service's slices.
	claims []sliceClaim
}

// sliceClaim is one address of a slice and the endpoint that lists it:
// endpoints[ep].addrs[ai].
type sliceClaim struct {
	addr   netip.Addr
	ep, ai int32
}

// foreignRef is a slice endpoint's targetRef to a pod of another
// namespace.
type foreignRef struct {
	addr string
	pod  types.NamespacedName
}

// labelMCSServiceName marks the EndpointSlices a Multi-Cluster Services
// controller writes for a ServiceImport: they carry another cluster's
// endpoints, not the Service's own.
const labelMCSServiceName = "multicluster.kubernetes.io/service-name"

// sliceService returns the name of the Service a slice's labels say it
// belongs to: its kubernetes.io/service-name label, or "" for a slice of
// no service, and for an MCS import's slice, which Istio ignores too.
func sliceService(labels map[string]string) string {
	if _, mcs := labels[labelMCSServiceName]; mcs {
		return ""
	}
	return labels[discoveryv1.LabelServiceName]
}

// badPort is a slice port numbered out of range.
type badPort struct {
	name string
	port int32
}

// sliceEndpointInfo is one endpoint of a sliceInfo.
type sliceEndpointInfo struct {
	// addrs are the endpoint's well-formed addresses, unmapped, in the
	// slice's order; empty for a slice of an unsupported address type.
	addrs []netip.Addr
	// pod is the endpoint's Pod targetRef, a pod of the slice's
	// namespace; zero when the endpoint names none (or a pod of another
	// namespace: see foreignRefs).
	pod        types.NamespacedName
	nodeName   string
	conditions conditions
	// hints are the endpoint's topology hints; nil for none.
	hints *model.Hints
}

// newSliceInfo returns the cached form of a slice.
func newSliceInfo(s *discoveryv1.EndpointSlice) *sliceInfo {
	out := &sliceInfo{
		objectMeta: objectMeta{
			namespace:       s.Namespace,
			name:            s.Name,
			resourceVersion: s.ResourceVersion,
			written:         writtenAt(&s.ObjectMeta),
		},
		created:     s.CreationTimestamp,
		service:     sliceService(s.Labels),
		addressType: s.AddressType,
		ports:       slicePorts(s.Ports),
	}
	for _, p := range s.Ports {
		if p.Port != nil && (*p.Port < 1 || *p.Port > 65535) {
			out.badPorts = append(out.badPorts, badPort{name: ptrOr(p.Name), port: *p.Port})
		}
	}
	ip := s.AddressType == discoveryv1.AddressTypeIPv4 || s.AddressType == discoveryv1.AddressTypeIPv6
	var all []netip.Addr // one array for every endpoint's addresses
	if ip {
		n := 0
		for i := range s.Endpoints {
			n += len(s.Endpoints[i].Addresses)
		}
		all = make([]netip.Addr, 0, n)
	}
	out.endpoints = make([]sliceEndpointInfo, len(s.Endpoints))
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		e := &out.endpoints[i]
		if ip {
			start := len(all)
			for _, raw := range ep.Addresses {
				a, err := netip.ParseAddr(raw)
				if err != nil || a.Zone() != "" {
					out.badAddrs = append(out.badAddrs, raw)
					continue
				}
				all = append(all, a.Unmap())
			}
			e.addrs = all[start:len(all):len(all)]
		}
		if ref := ep.TargetRef; ref != nil && ref.Kind == "Pod" && ref.Name != "" {
			pod := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
			if pod.Namespace == "" {
				pod.Namespace = s.Namespace
			}
			if pod.Namespace == s.Namespace {
				e.pod = pod
			} else {
				addr := ""
				switch {
				case len(e.addrs) > 0:
					addr = e.addrs[0].String()
				case len(ep.Addresses) > 0:
					addr = ep.Addresses[0]
				}
				out.foreignRefs = append(out.foreignRefs, foreignRef{addr: addr, pod: pod})
			}
		}
		e.nodeName = ptrOr(ep.NodeName)
		e.conditions = newConditions(ep.Conditions)
		e.hints = sliceHints(ep.Hints)
	}
	out.claims = sliceClaims(out.endpoints, len(all))
	return out
}

// sliceHints returns a slice endpoint's hints, sorted, without
// duplicates or empty names; nil when it has none.
func sliceHints(h *discoveryv1.EndpointHints) *model.Hints {
	if h == nil {
		return nil
	}
	var out model.Hints
	for _, z := range h.ForZones {
		if z.Name != "" {
			out.ForZones = append(out.ForZones, z.Name)
		}
	}
	for _, n := range h.ForNodes {
		if n.Name != "" {
			out.ForNodes = append(out.ForNodes, n.Name)
		}
	}
	if out.IsZero() {
		return nil
	}
	slices.Sort(out.ForZones)
	slices.Sort(out.ForNodes)
	out.ForZones, out.ForNodes = slices.Compact(out.ForZones), slices.Compact(out.ForNodes)
	return &out
}

// sliceClaims returns the claims of a slice's endpoints, n addresses in
// all: sorted by address, the first listing of an address kept.
func sliceClaims(eps []sliceEndpointInfo, n int) []sliceClaim {
	if n == 0 {
		return nil
	}
	out := make([]sliceClaim, 0, n)
	for i := range eps {
		for j, a := range eps[i].addrs {
			out = append(out, sliceClaim{addr: a, ep: int32(i), ai: int32(j)})
		}
	}
	byAddr := func(a, b sliceClaim) int { return a.addr.Compare(b.addr) }
	if !slices.IsSortedFunc(out, byAddr) {
		// Stable: of the listings of one address the first stays first.
		slices.SortStableFunc(out, byAddr)
	}
	return slices.CompactFunc(out, func(a, b sliceClaim) bool { return a.addr == b.addr })
}

// address returns a claim's address as a slice of the endpoint's own
// (immutable) array.
func (s *sliceInfo) address(c sliceClaim) []netip.Addr {
	addrs := s.endpoints[c.ep].addrs
	return addrs[c.ai : c.ai+1 : c.ai+1]
}

// portNumbers are a slice's port numbers by name, sorted by name, one
// per name. A slice names a handful of ports, so a sorted list is smaller
// and quicker to build and to read than a map.
type portNumbers []portNumber

type portNumber struct {
	name string
	num  uint32
}

// get returns the number of the port named name.
func (ps portNumbers) get(name string) (uint32, bool) {
	i, ok := slices.BinarySearchFunc(ps, name, func(p portNumber, name string) int { return cmp.Compare(p.name, name) })
	if !ok {
		return 0, false
	}
	return ps[i].num, true
}

// slicePorts returns a slice's port numbers by name. Ports without a
// number (meaning "all ports") or out of range are skipped; for a
// repeated name the first port wins.
func slicePorts(ports []discoveryv1.EndpointPort) portNumbers {
	out := make(portNumbers, 0, len(ports))
	for _, p := range ports {
		if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
			continue
		}
		out = append(out, portNumber{name: ptrOr(p.Name), num: uint32(*p.Port)})
	}
	if len(out) < 2 {
		return out
	}
	// A stable sort keeps the ports of one name in the slice's order, and
	// compacting keeps the first of each.
	slices.SortStableFunc(out, func(a, b portNumber) int { return cmp.Compare(a.name, b.name) })
	return slices.CompactFunc(out, func(a, b portNumber) bool { return a.name == b.name })
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
