package address

import (
	"cmp"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/model"
)

// meta is the cluster metadata the index keeps from the registry's
// events (registry.MetadataHandler): each cluster's network, namespaces
// and Gateway API Gateways; and what it derives from each Gateway, its
// waypoint and what was not usable. Only Run's goroutine uses it.
//
// While reads is set, the reads a derivation makes that its own key does
// not imply (dep) are appended to it: the index records them as the
// derivation's dependencies.
type meta struct {
	networks   map[model.ClusterID]model.NetworkID
	namespaces map[model.NamespaceKey]*model.Namespace
	gateways   map[model.GatewayKey]*model.Gateway
	waypoints  map[model.GatewayKey]*Waypoint
	diags      map[model.GatewayKey][]model.Diagnostic
	reads      *[]dep
}

// dep is what a derivation read beyond what its key implies: the
// waypoint a Gateway is (whether or not there is one), or the network
// gateway of a network. What every derivation reads, its own
// namespace's labels and its cluster's network (or a service's
// clusters'), is implied, and found by the index's own indexes when it
// changes (metaChanges.dirty).
type dep struct {
	gateway model.GatewayKey
	network model.NetworkID
}

// isNetwork reports whether d is a network's gateway.
func (d dep) isNetwork() bool { return d.gateway == model.GatewayKey{} }

// record notes a read, when reads are recorded.
func (m *meta) record(d dep) {
	if m.reads != nil {
		*m.reads = append(*m.reads, d)
	}
}

// recording records the reads of derive, and returns them.
func (m *meta) recording(derive func()) []dep {
	var reads []dep
	m.reads = &reads
	derive()
	m.reads = nil
	return reads
}

func newMeta() *meta {
	return &meta{
		networks:   map[model.ClusterID]model.NetworkID{},
		namespaces: map[model.NamespaceKey]*model.Namespace{},
		gateways:   map[model.GatewayKey]*model.Gateway{},
		waypoints:  map[model.GatewayKey]*Waypoint{},
		diags:      map[model.GatewayKey][]model.Diagnostic{},
	}
}

// network returns a cluster's network, "" when unknown.
func (m *meta) network(c model.ClusterID) model.NetworkID { return m.networks[c] }

// namespace returns a cluster's namespace, nil when unknown.
func (m *meta) namespace(c model.ClusterID, name string) *model.Namespace {
	return m.namespaces[model.NamespaceKey{Cluster: c, Name: name}]
}

// waypoint returns the waypoint the Gateway namespace/name of a cluster
// is, nil when there is none.
func (m *meta) waypoint(c model.ClusterID, ns, name string) *Waypoint {
	key := model.GatewayKey{Cluster: c, Namespace: ns, Name: name}
	m.record(dep{gateway: key})
	return m.waypoints[key]
}

// setCluster records a cluster's network (nil: the cluster is gone) and
// reports whether it changed; its Gateways' waypoints follow it, and
// those that changed are added to waypoints.
func (m *meta) setCluster(id model.ClusterID, c *model.Cluster, waypoints map[model.GatewayKey]struct{}) bool {
	old, had := m.networks[id]
	if c == nil {
		delete(m.networks, id)
	} else {
		m.networks[id] = c.Network
	}
	if now, has := m.networks[id]; had == has && old == now {
		return false
	}
	for key, gw := range m.gateways {
		if key.Cluster == id {
			before := m.waypoints[key]
			m.derive(key, gw)
			if !sameWaypoint(before, m.waypoints[key]) {
				waypoints[key] = struct{}{}
			}
		}
	}
	return true
}

// setNamespace records a namespace (nil: deleted) and reports whether
// its labels changed.
func (m *meta) setNamespace(key model.NamespaceKey, ns *model.Namespace) bool {
	old := m.namespaces[key]
	if ns == nil {
		delete(m.namespaces, key)
	} else {
		m.namespaces[key] = ns
	}
	return !old.Equals(ns)
}

// setGateway records a Gateway (nil: deleted) and reports what the
// index derives from it that changed: its waypoint, its diagnostics, or
// the Gateway itself as a network gateway (its labels, class, listeners
// or status addresses).
func (m *meta) setGateway(key model.GatewayKey, gw *model.Gateway) (waypoint, diags, network bool) {
	old := m.gateways[key]
	oldWaypoint, oldDiags := m.waypoints[key], m.diags[key]
	if gw == nil {
		delete(m.gateways, key)
		delete(m.waypoints, key)
		delete(m.diags, key)
	} else {
		m.gateways[key] = gw
		m.derive(key, gw)
	}
	return !sameWaypoint(oldWaypoint, m.waypoints[key]), !sameDiags(oldDiags, m.diags[key]), !sameAsNetworkGateway(old, gw)
}

// derive computes a Gateway's waypoint and diagnostics.
func (m *meta) derive(key model.GatewayKey, gw *model.Gateway) {
	w, diags := WaypointOf(gw, m.networks[key.Cluster])
	if w == nil {
		delete(m.waypoints, key)
	} else {
		m.waypoints[key] = w
	}
	if len(diags) == 0 {
		delete(m.diags, key)
	} else {
		m.diags[key] = diags
	}
}

// networkGateways returns the network gateways of ambient mode
// (NetworkGatewaysOf), sorted, and the Gateway each comes from: the
// config cluster's Gateways', local, and with multi those of every other
// cluster, remote.
func (m *meta) networkGateways(config model.ClusterID, multi bool) ([]model.NetworkGateway, map[model.NetworkGateway]model.GatewayKey) {
	var out []model.NetworkGateway
	sources := map[model.NetworkGateway]model.GatewayKey{}
	for key, gw := range m.gateways {
		local := key.Cluster == config || config == ""
		if !local && !multi {
			continue
		}
		for _, g := range NetworkGatewaysOf(gw, local) {
			out = append(out, g)
			sources[g] = key
		}
	}
	return model.SortGateways(out), sources
}

// diagnostics returns what the Gateways' waypoints could not use.
func (m *meta) diagnostics() []model.Diagnostic {
	var out []model.Diagnostic
	for _, ds := range m.diags {
		out = append(out, ds...)
	}
	return out
}

// firstCluster returns the first cluster by ID that has a network or
// namespaces, "" when none.
func (m *meta) firstCluster() model.ClusterID {
	var first model.ClusterID
	found := false
	see := func(c model.ClusterID) {
		if !found || c < first {
			first, found = c, true
		}
	}
	for c := range m.networks {
		see(c)
	}
	for k := range m.namespaces {
		see(k.Cluster)
	}
	return first
}

func compareGatewayKeys(a, b model.GatewayKey) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// sameWaypoint reports whether two waypoints are the same to the index.
func sameWaypoint(a, b *Waypoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Namespace == b.Namespace && a.Name == b.Name && a.For == b.For &&
		proto.Equal(a.Address, b.Address) && proto.Equal(a.Binding, b.Binding) &&
		a.admitted.From == b.admitted.From && a.admitted.Selector.Equals(b.admitted.Selector)
}

// sameAsNetworkGateway reports whether two versions of a Gateway declare
// the same network gateways: the same labels, annotations, class,
// listeners and status addresses.
func sameAsNetworkGateway(a, b *model.Gateway) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Class == b.Class && maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		slices.EqualFunc(a.Listeners, b.Listeners, func(x, y model.GatewayListener) bool {
			return x.Port == y.Port && x.Protocol == y.Protocol && (x.TLS == nil) == (y.TLS == nil) &&
				(x.TLS == nil || x.TLS.Mode == y.TLS.Mode)
		}) &&
		slices.Equal(a.StatusAddresses, b.StatusAddresses)
}
