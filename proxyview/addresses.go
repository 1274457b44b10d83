package proxyview

import (
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// Addresses returns the VIPs a proxy uses for a service, as Istio picks
// them:
//
//   - A Kubernetes Service: its VIPs in the proxy's cluster, of the
//     proxy's IP family (see Options.DualStack); when it has none there,
//     the first VIP of the first cluster by ID that has one (the cluster
//     whose version gives the merged service its attributes), if it is of
//     the proxy's family.
//   - A ServiceEntry: every address it declares, whatever the family;
//     when it declares none, its allocated VIPs, of the proxy's family,
//     to a proxy that captures DNS (Proxy.DNSCapture).
//
// It returns nil when the proxy has no VIP for the service (a headless
// Service, or an entry without addresses): Istio's 0.0.0.0. The result
// is the caller's.
func (s *Snapshot) Addresses(p *Proxy, svc *model.Service) []netip.Prefix {
	if svc == nil {
		return nil
	}
	fam := p.IPFamilies()
	if svc.Provider != model.Kubernetes {
		var out []netip.Prefix
		for _, c := range slices.Sorted(mapKeys(svc.Addresses)) {
			out = append(out, svc.Addresses[c]...)
		}
		if len(out) > 0 || !p.DNSCapture {
			return out
		}
		for _, a := range svc.AutoAddresses {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
		return s.byFamily(out, fam)
	}
	if p.Cluster != "" {
		if vips := s.byFamily(slices.Clone(svc.Addresses[p.Cluster]), fam); len(vips) > 0 {
			return vips
		}
	}
	for _, c := range slices.Sorted(mapKeys(svc.Addresses)) {
		if vips := svc.Addresses[c]; len(vips) > 0 {
			return filterFamily([]netip.Prefix{vips[0]}, fam)
		}
	}
	return nil
}

// byFamily keeps the VIPs a proxy of family fam uses: with
// Options.DualStack a dual-stack proxy uses all; otherwise see
// filterFamily.
func (s *Snapshot) byFamily(vips []netip.Prefix, fam IPFamilies) []netip.Prefix {
	if s.conf.DualStack && fam == DualStack {
		return vips
	}
	return filterFamily(vips, fam)
}

// filterFamily keeps the VIPs of one family, in order: the proxy's, or
// for a dual-stack proxy that of the first VIP (Istio's
// FilterAddressesByIPFamily).
func filterFamily(vips []netip.Prefix, fam IPFamilies) []netip.Prefix {
	if len(vips) == 0 {
		return nil
	}
	if fam == DualStack {
		if vips[0].Addr().Unmap().Is4() {
			fam = IPv4
		} else {
			fam = IPv6
		}
	}
	if vips = slices.DeleteFunc(vips, func(v netip.Prefix) bool { return !fam.has(v.Addr()) }); len(vips) == 0 {
		return nil
	}
	return vips
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
