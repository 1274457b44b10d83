package xds

import (
	"log/slog"
	"slices"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
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

// sharedCache holds the resources that depend on the service alone
// (listeners, routes, clusters), translated once for all nodes and kept
// across builds, per service key with the service value they were
// translated from (a changed service is a new value).
type sharedCache map[model.ServiceKey]sharedEntry

type sharedEntry struct {
	svc *model.Service
	res *sharedResources
}

// claCache holds load assignments, kept across builds, shared by the
// nodes whose endpoints of a service are the same
// (proxyview.Snapshot.EndpointsKey), with the service value they were
// built from. Entries of a service whose endpoints changed are dropped
// before a build uses the cache.
type claCache map[claKey]claEntry

type claKey struct {
	service model.ServiceKey
	port    uint32
	client  Client
	proxy   proxyview.EndpointsKey
}

type claEntry struct {
	svc *model.Service
	cla *endpointv3.ClusterLoadAssignment
}

// caches are what builds share: the resources of the service alone, and
// the load assignments.
type caches struct {
	shared sharedCache
	clas   claCache
}

func newCaches() caches { return caches{shared: sharedCache{}, clas: claCache{}} }

// forget drops what the caches hold of the services keys; of every
// service with all.
func (c caches) forget(keys map[model.ServiceKey]bool, all bool) {
	if all {
		clear(c.shared)
		clear(c.clas)
		return
	}
	for k := range keys {
		delete(c.shared, k)
	}
	for k := range c.clas {
		if keys[k.service] {
			delete(c.clas, k)
		}
	}
}

// build is one round of updates: the snapshot every node is brought to,
// and the cache of the resources that depend on the service alone.
type build struct {
	snap    *proxyview.Snapshot
	log     *slog.Logger
	version func() string // a new version, never given before
	caches
	// equal holds the answers of same.
	equal map[[2]types.Resource]bool
}

func newBuild(snap *proxyview.Snapshot, c caches, version func() string, log *slog.Logger) *build {
	return &build{snap: snap, log: log, version: version, caches: c, equal: map[[2]types.Resource]bool{}}
}

// same reports whether two resources are equal. Nodes share resources,
// so the answer for a pair is kept for the build's other nodes.
func (b *build) same(a, c types.Resource) bool {
	if a == c {
		return true
	}
	k := [2]types.Resource{a, c}
	eq, ok := b.equal[k]
	if !ok {
		eq = proto.Equal(a, c)
		b.equal[k] = eq
	}
	return eq
}

// loadAssignment returns the load assignment of a port of svc for a
// node, from the cache when a node of the same endpoints has had it.
func (b *build) loadAssignment(svc *model.Service, p model.Port, proxy *proxyview.Proxy, c Client) *endpointv3.ClusterLoadAssignment {
	k := claKey{service: svc.Key(), port: p.Port, client: c, proxy: b.snap.EndpointsKey(proxy, svc)}
	if e, ok := b.clas[k]; ok && e.svc == svc {
		return e.cla
	}
	cla := LoadAssignment(svc.Hostname, p.Port, b.snap.Endpoints(proxy, svc.Key(), p.Name), c)
	b.clas[k] = claEntry{svc: svc, cla: cla}
	return cla
}

// serviceResources returns the listeners, routes and clusters of every
// port of svc that is served (PortServed), by kind and name; a wildcard
// host gets clusters alone, since no client dials it by name. A resource
// that fails to translate is logged and left out.
func (b *build) serviceResources(svc *model.Service) *sharedResources {
	if e, ok := b.shared[svc.Key()]; ok && e.svc == svc {
		return e.res
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
	b.shared[svc.Key()] = sharedEntry{svc: svc, res: r}
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
		if old, ok := ps.byKind[k][name]; ok && b.same(old.res, res) {
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
			cla := b.loadAssignment(svc, p, &ps.proxy, ps.client)
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
