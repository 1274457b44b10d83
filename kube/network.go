package kube

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// networkRange maps an address range to a network.
type networkRange struct {
	prefix  netip.Prefix
	network model.NetworkID
}

// networkEnv is what decides the network of a workload besides its own
// label.
type networkEnv struct {
	// cluster is the cluster's network: Options.Network, else the
	// topology.istio.io/network label of the system namespace; "" when
	// neither is set.
	cluster model.NetworkID
	// ranges map addresses to networks, most specific prefix first.
	ranges []networkRange
}

// newNetworkRanges orders a CIDR → network map for lookup: longest prefix
// first, then by address, so the most specific range wins and the order
// never depends on map iteration.
func newNetworkRanges(cidrs map[netip.Prefix]model.NetworkID) []networkRange {
	out := make([]networkRange, 0, len(cidrs))
	for p, n := range cidrs {
		out = append(out, networkRange{prefix: p.Masked(), network: n})
	}
	slices.SortFunc(out, func(a, b networkRange) int {
		if c := cmp.Compare(b.prefix.Bits(), a.prefix.Bits()); c != 0 {
			return c
		}
		return a.prefix.Addr().Compare(b.prefix.Addr())
	})
	return out
}

// resolveNetwork decides a workload's network, in Istio's order:
//  1. the workload's topology.istio.io/network label;
//  2. the cluster's network (env.cluster);
//  3. the first range in env.ranges holding one of the addresses, tried
//     in address order (primary first).
//
// It returns "" when none applies.
func resolveNetwork(labels map[string]string, addrs []netip.Addr, env networkEnv) model.NetworkID {
	if n := labels[labelNetwork]; n != "" {
		return model.NetworkID(n)
	}
	if env.cluster != "" {
		return env.cluster
	}
	for _, a := range addrs {
		for _, r := range env.ranges {
			if r.prefix.Contains(a) {
				return r.network
			}
		}
	}
	return ""
}
