package kube

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

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
	// topology.istio.io/network label of the system namespace, else the
	// mesh networks' network whose endpoints come from the cluster's
	// registry; "" when none is set.
	cluster model.NetworkID
	// ranges map addresses to networks, most specific prefix first:
	// Options.NetworkCIDRs, and the mesh networks' fromCidr ranges.
	ranges []networkRange
}

// SetMeshNetworks sets the mesh networks (Istio's meshNetworks) the
// controller reads: the network of the cluster's workloads when neither
// Options.Network nor the system namespace names one (the network whose
// endpoints come FromRegistry this cluster), address ranges besides
// Options.NetworkCIDRs (a range both give takes the option's network),
// and the gateways of the Services the networks name by
// RegistryServiceName. Nil clears them. It may be called before Run or
// while running; the change is applied on the controller's worker, as
// any other. The aggregate calls it with its Options.MeshNetworks. mn
// must not be modified afterwards.
func (c *Controller) SetMeshNetworks(mn *model.MeshNetworks) {
	c.in.Add(func(ch *changes) { ch.mesh = &meshChange{networks: mn} })
}

// meshChange is a pending SetMeshNetworks.
type meshChange struct{ networks *model.MeshNetworks }

// onMeshNetworks applies new mesh networks: the network environment,
// and the Services named as gateways.
func (c *Controller) onMeshNetworks(mn *model.MeshNetworks) {
	c.mesh = mn
	named := map[types.NamespacedName][]model.NetworkGateway{}
	suffix := ".svc." + c.opts.DomainSuffix
	for host, gws := range mn.ServiceGateways(c.opts.ClusterID) {
		name, ns, ok := strings.Cut(strings.TrimSuffix(string(host), suffix), ".")
		if !ok || !strings.HasSuffix(string(host), suffix) || strings.Contains(ns, ".") {
			c.log.Warn("mesh networks: registryServiceName is not a Service of this cluster's domain", "host", string(host))
			continue
		}
		named[types.NamespacedName{Namespace: ns, Name: name}] = gws
	}
	c.meshGateways = named
	c.markGateways()
	c.updateNetworkEnv()
}

// clusterNetwork returns the cluster's network (see networkEnv.cluster).
func (c *Controller) clusterNetwork() model.NetworkID {
	if c.opts.Network != "" {
		return c.opts.Network
	}
	if ns := c.cl.namespaces[c.opts.SystemNamespace]; ns != nil && ns.Labels[labelNetwork] != "" {
		return model.NetworkID(ns.Labels[labelNetwork])
	}
	return c.mesh.RegistryNetwork(c.opts.ClusterID)
}

// updateNetworkEnv recomputes the network environment from the options,
// the system namespace and the mesh networks, and reports whether it
// changed. A change drops every memo that holds a network and marks
// everything dirty.
func (c *Controller) updateNetworkEnv() bool {
	cidrs := c.mesh.CIDRs()
	if cidrs == nil {
		cidrs = map[netip.Prefix]model.NetworkID{}
	}
	for p, n := range c.opts.NetworkCIDRs {
		cidrs[p.Masked()] = n
	}
	env := networkEnv{cluster: c.clusterNetwork(), ranges: newNetworkRanges(cidrs)}
	if env.cluster == c.net.cluster && slices.Equal(env.ranges, c.net.ranges) {
		return false
	}
	if !slices.Equal(env.ranges, c.net.ranges) {
		// Pod memos are kept across a change of the cluster's network
		// (they record it), not of the ranges.
		for _, pod := range c.cl.pods {
			c.dropPodMemo(pod)
		}
	}
	c.net = env
	c.network.Store(&env.cluster)
	for _, st := range c.svcs {
		st.memo = endpointMemo{}
	}
	c.markAll("")
	return true
}

// gatewayKeys returns, sorted, the Services that may declare gateways:
// the labelled candidates and those the mesh networks name.
func (c *Controller) gatewayKeys() []types.NamespacedName {
	keys := slices.Collect(maps.Keys(c.cl.gatewaySvcs))
	for k := range c.meshGateways {
		if _, ok := c.cl.gatewaySvcs[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareNames)
	return keys
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
