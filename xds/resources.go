package xds

import (
	"log/slog"
	"slices"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
)

// entry is one resource as a node is served it, with the version of the
// update that last changed it.
type entry struct {
	res     types.Resource
	version string
}

// proxyState is what is built for one node: its proxy, the resources of
// each hostname it sees, and the snapshot served from them.
type proxyState struct {
	proxy proxyview.Proxy
	// client is what kind of client the node is.
	client Client
	// snap is the view's snapshot the resources were last brought to.
	snap *proxyview.Snapshot
	// hosts holds, per hostname served, the key of the service
	// translated and the names of its resources of each kind.
	hosts map[model.Hostname]hostState
	// byKind holds every resource served, per kind, by name.
	byKind [numKinds]map[string]entry
	// served is the snapshot handed to the cache; nil before the first
	// update.
	served *nodeSnapshot
	// updates counts the versions set per kind.
	updates [numKinds]int
}

type hostState struct {
	key   model.ServiceKey
	names [numKinds][]string
}

func newProxyState(p proxyview.Proxy, c Client) *proxyState {
	ps := &proxyState{proxy: p, client: c, hosts: map[model.Hostname]hostState{}}
	for k := range ps.byKind {
		ps.byKind[k] = map[string]entry{}
	}
	return ps
}

// serviceKinds is the number of kinds that depend on the service alone
// (listeners, routes and clusters, the first kinds): all nodes that see a
// service share them.
const serviceKinds = endpoints

// sharedResources are one service's resources of the service kinds, by
// kind and name.
type sharedResources [serviceKinds]map[string]types.Resource

// build is one round of updates: the snapshot every node is brought to,
// and the resources that depend on the service alone (listeners, routes,
// clusters), translated once for all nodes.
type build struct {
	snap    *proxyview.Snapshot
	log     *slog.Logger
	version func() string // a new version, never given before
	shared  map[*model.Service]*sharedResources
}

func newBuild(snap *proxyview.Snapshot, version func() string, log *slog.Logger) *build {
	return &build{snap: snap, log: log, version: version, shared: map[*model.Service]*sharedResources{}}
}

// serviceResources returns the listeners, routes and clusters of every
// port of svc that is served (PortServed), by kind and name; a wildcard
// host gets clusters alone, since no client dials it by name. A resource
// that fails to translate is logged and left out.
func (b *build) serviceResources(svc *model.Service) *sharedResources {
	if r, ok := b.shared[svc]; ok {
		return r
	}
	r := &sharedResources{}
	for k := range r {
		r[k] = map[string]types.Resource{}
	}
	for _, p := range svc.Ports {
		if !PortServed(p) {
			continue
		}
		if !svc.Hostname.IsWildcard() {
			if lis, err := Listener(svc.Hostname, p.Port); err != nil {
				b.log.Error("listener not translated", "service", svc.Key().String(), "err", err)
			} else {
				r[listeners][lis.Name] = lis
			}
			rc := RouteConfiguration(svc.Hostname, p.Port)
			r[routes][rc.Name] = rc
		}
		if c, err := Cluster(svc.Hostname, p); err != nil {
			b.log.Error("cluster not translated", "service", svc.Key().String(), "err", err)
		} else {
			r[clusters][c.Name] = c
		}
	}
	b.shared[svc] = r
	return r
}

// update brings the node's resources to b's snapshot. It translates again
// the hostnames whose service is in changed, those whose service for the
// node is not the one translated (the node's visible list changed), and
// with full every hostname; it drops the hostnames the node no longer
// sees. Each resource is compared with the one served: a kind gets a new
// version (one for the whole update) only when one of its resources was
// added, changed or removed, and only then is a new snapshot made. It
// returns the names of the resources added, changed or removed, by kind,
// and whether any kind changed. The first update versions every kind,
// empty or not, so that a client asking for a resource the node does not
// see is told at once that it does not exist.
func (ps *proxyState) update(b *build, full bool, changed map[model.ServiceKey]bool) (names [numKinds][]string, ok bool) {
	ps.snap = b.snap
	var dirty [numKinds]bool
	version := ""
	set := func(k kind, name string, res types.Resource) {
		if old, ok := ps.byKind[k][name]; ok && proto.Equal(old.res, res) {
			return
		}
		if version == "" {
			version = b.version()
		}
		ps.byKind[k][name] = entry{res: res, version: version}
		dirty[k] = true
		names[k] = append(names[k], name)
	}
	drop := func(k kind, name string) {
		if _, ok := ps.byKind[k][name]; ok {
			delete(ps.byKind[k], name)
			dirty[k] = true
			names[k] = append(names[k], name)
		}
	}

	visible := map[model.Hostname]bool{}
	for _, svc := range b.snap.Services(&ps.proxy) {
		if Translatable(svc, ps.client) != nil {
			continue
		}
		visible[svc.Hostname] = true
		old, had := ps.hosts[svc.Hostname]
		if !full && had && old.key == svc.Key() && !changed[svc.Key()] {
			continue
		}
		next := hostState{key: svc.Key()}
		shared := b.serviceResources(svc)
		for k := range serviceKinds {
			for name, res := range shared[k] {
				set(k, name, res)
				next.names[k] = append(next.names[k], name)
			}
		}
		for _, p := range svc.Ports {
			if !PortServed(p) {
				continue
			}
			cla := LoadAssignment(svc.Hostname, p.Port, b.snap.Endpoints(&ps.proxy, svc.Key(), p.Name), ps.client)
			set(endpoints, cla.ClusterName, cla)
			next.names[endpoints] = append(next.names[endpoints], cla.ClusterName)
		}
		for k := range numKinds {
			for _, name := range old.names[k] {
				if !slices.Contains(next.names[k], name) {
					drop(k, name)
				}
			}
		}
		ps.hosts[svc.Hostname] = next
	}
	for h, old := range ps.hosts {
		if visible[h] {
			continue
		}
		for k := range numKinds {
			for _, name := range old.names[k] {
				drop(k, name)
			}
		}
		delete(ps.hosts, h)
	}

	first := ps.served == nil
	if first {
		ps.served = &nodeSnapshot{}
	}
	next := *ps.served
	changedAny := false
	for k := range numKinds {
		if !dirty[k] && !first {
			continue
		}
		if version == "" {
			version = b.version()
		}
		next.kinds[k] = newKindSnapshot(version, ps.byKind[k])
		ps.updates[k]++
		changedAny = true
	}
	if changedAny {
		ps.served = &next
	}
	return names, changedAny
}
