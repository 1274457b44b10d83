package address

import (
	"slices"

	"github.com/meshreg/meshreg/model"
)

// metaChanges are the changes of the cluster metadata in a batch.
type metaChanges struct {
	// clusters' networks and namespaces' labels or annotations changed;
	// so did the waypoints of the Gateways in waypoints, and the network
	// gateways of the networks in gatewayNetworks.
	clusters        []model.ClusterID
	namespaces      []model.NamespaceKey
	waypoints       map[model.GatewayKey]struct{}
	gatewayNetworks []model.NetworkID
	// network says a Gateway changed as a network gateway; diags that a
	// Gateway's diagnostics changed.
	network, diags bool
}

func (c metaChanges) any() bool {
	return len(c.clusters) > 0 || len(c.namespaces) > 0 || len(c.waypoints) > 0 || c.network || c.diags
}

// markUsers marks dirty what depends on the metadata that changed: a
// cluster's network, its workloads and the services it declares; a
// namespace's labels, its workloads and services (and, for the
// canonical service of a host, the services of its hosts); a Gateway's
// waypoint, whatever read it (recorded); a network's gateway, the
// workloads on that network, and the ServiceEntries and services that
// read it (recorded).
func (x *Index) markUsers(c metaChanges, d *dirty) {
	st := x.st
	for _, id := range c.clusters {
		for k := range st.wls {
			if k.Cluster == id {
				d.workloads[k] = struct{}{}
			}
		}
		for k, s := range st.svcs {
			if _, vips := s.Addresses[id]; vips || declares(s, id) {
				d.markService(k, s)
			}
		}
	}
	for _, key := range c.namespaces {
		for k := range st.wlsByNS[key.Name] {
			if k.Cluster == key.Cluster {
				d.workloads[k] = struct{}{}
			}
		}
		for k, s := range st.svcsByNS[key.Name] {
			d.markService(k, s)
			for hk, hs := range st.byHost[k.Hostname] {
				d.markService(hk, hs)
			}
		}
	}
	for key := range c.waypoints {
		st.deps.users(dep{gateway: key}, d)
	}
	for _, n := range c.gatewayNetworks {
		for k, w := range st.wls {
			if net := w.Endpoint.Network; net == n || net == "" && st.meta.networks[k.Cluster] == n {
				d.workloads[k] = struct{}{}
			}
		}
		st.deps.users(dep{network: n}, d)
	}
}

// markService marks a service dirty, with its ServiceEntry's or its
// slices' workloads.
func (d *dirty) markService(k model.ServiceKey, s *model.Service) {
	d.services[k] = struct{}{}
	if isEntry(s) {
		d.entries[entryRef{s.Namespace, s.Name}] = struct{}{}
	} else {
		d.slices[k] = struct{}{}
	}
}

// changedNetworks returns the networks whose gateways (or the Gateways
// they come from) differ between two lists.
func changedNetworks(a, b []model.NetworkGateway, aSrc, bSrc map[model.NetworkGateway]model.GatewayKey) []model.NetworkID {
	type sourced struct {
		g   model.NetworkGateway
		src model.GatewayKey
	}
	of := func(gws []model.NetworkGateway, src map[model.NetworkGateway]model.GatewayKey) map[model.NetworkID][]sourced {
		out := map[model.NetworkID][]sourced{}
		for _, g := range gws {
			out[g.Network] = append(out[g.Network], sourced{g, src[g]})
		}
		return out
	}
	before, after := of(a, aSrc), of(b, bSrc)
	var out []model.NetworkID
	for n, gws := range after {
		if !slices.Equal(gws, before[n]) {
			out = append(out, n)
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}
