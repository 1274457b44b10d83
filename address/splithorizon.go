package address

import (
	"maps"
	"slices"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// withRemoteIdentities returns a global service's subject alternative
// names with the identities of the workloads that back it on other
// networks, sorted.
func withRemoteIdentities(sans []string, remote map[string]remoteBacking) []string {
	if len(remote) == 0 {
		return sans
	}
	out := slices.Clone(sans)
	for _, r := range remote {
		if !slices.Contains(out, r.identity) {
			out = append(out, r.identity)
		}
	}
	slices.Sort(out)
	return out
}

// splitHorizon returns the split-horizon workloads of a global service:
// one per network its remote workloads are on that has a gateway.
func (x *Index) splitHorizon(b *builder, svc *workloadapi.Service, remote map[string]remoteBacking) []*workloadapi.Workload {
	capacity := map[model.NetworkID]uint32{}
	for _, r := range remote {
		capacity[r.network] += r.capacity
	}
	var out []*workloadapi.Workload
	for _, n := range slices.Sorted(maps.Keys(capacity)) {
		x.st.meta.record(dep{network: n})
		gw, ok := firstGateway(x.st.gateways, n)
		if !ok {
			continue
		}
		src := x.st.gwSources[gw]
		out = append(out, b.splitHorizon(svc, n, gw, src.Namespace, src.Name, capacity[n]))
	}
	return out
}

// firstGateway returns the first network gateway of a network.
func firstGateway(gws []model.NetworkGateway, n model.NetworkID) (model.NetworkGateway, bool) {
	for _, g := range gws {
		if g.Network == n {
			return g, true
		}
	}
	return model.NetworkGateway{}, false
}
