package proxyview

import (
	"cmp"
	"slices"

	"github.com/meshreg/meshreg/internal/cow"
	"github.com/meshreg/meshreg/model"
)

// Snapshot is the view at one generation: immutable, safe for concurrent
// use, and cheap to take (View.Snapshot). Every answer of one snapshot
// agrees with every other. Values it returns are shared with the
// registry and must not be modified; slices it returns are the caller's
// unless a method says otherwise.
type Snapshot struct {
	gen    uint64
	synced bool
	conf   *config

	services cow.Map[model.ServiceKey, *entry]
	vis      *visibility
	gateways *gateways

	// superseded is closed when a newer generation is published.
	superseded chan struct{}
}

// entry is one service and its endpoints.
type entry struct {
	svc          *model.Service
	scope        scope
	clusterLocal bool
	eps          []*model.Endpoint // the registry's list, shared
}

// config is what the options resolve to, shared by every snapshot.
type config struct {
	Options
	clusterLocal clusterLocal
}

func emptySnapshot(conf *config) *Snapshot {
	return &Snapshot{
		conf:       conf,
		vis:        &visibility{byNamespace: map[string][]*model.Service{}, visible: map[string][]*model.Service{}},
		gateways:   newGateways(nil, nil),
		superseded: make(chan struct{}),
	}
}

// Generation returns the snapshot's generation: 0 before the view's first
// state, then one more for each state the view publishes.
func (s *Snapshot) Generation() uint64 { return s.gen }

// Synced reports whether the snapshot holds the source's initial state:
// the source has synced (when it says; a source that does not is taken
// as synced) and everything it held by then is in the snapshot.
func (s *Snapshot) Synced() bool { return s.synced }

// Superseded returns a channel that is closed when the view publishes a
// newer generation.
func (s *Snapshot) Superseded() <-chan struct{} { return s.superseded }

// Services returns the services visible from the proxy's namespace, one
// per hostname, sorted by hostname (see Options.DefaultServiceExportTo
// and the package doc for the rules). The slice is shared and must not
// be modified; the first call for a namespace in a generation builds it,
// in time proportional to the services visible.
func (s *Snapshot) Services(p *Proxy) []*model.Service { return s.vis.visibleFrom(p.Namespace) }

// Service returns the service a hostname names for the proxy: the one of
// Services with that hostname, or nil.
func (s *Snapshot) Service(p *Proxy, h model.Hostname) *model.Service {
	l := s.Services(p)
	i, found := slices.BinarySearchFunc(l, h, func(svc *model.Service, h model.Hostname) int { return cmp.Compare(svc.Hostname, h) })
	if !found {
		return nil
	}
	return l[i]
}

// Visible reports whether a service is visible from a namespace: whether
// its exportTo (or the mesh's default) includes it. A service visible
// from a namespace may still not be the one its hostname names there
// (Service).
func (s *Snapshot) Visible(svc *model.Service, namespace string) bool {
	return scopeOf(svc, s.conf.DefaultServiceExportTo, s.conf.ServiceEntryVisibility).visibleIn(namespace)
}

// ClusterLocal reports whether a host is cluster-local: its endpoints
// reach only proxies of their own cluster (Options.ServiceSettings).
func (s *Snapshot) ClusterLocal(h model.Hostname) bool { return s.conf.clusterLocal.is(h) }

// Endpoints returns a proxy's endpoints of one port (by name) of a
// service, by locality, sorted by locality: nil when the service or port
// does not exist. See the package doc for what is filtered and how
// endpoints on other networks are replaced by their gateways.
func (s *Snapshot) Endpoints(p *Proxy, key model.ServiceKey, port string) []LocalityEndpoints {
	e, ok := s.services.Get(key)
	if !ok {
		return nil
	}
	return s.endpointsFor(p, e, port)
}

// NetworkGateways returns the registry's network gateways, sorted by
// model.NetworkGateway.Compare. The slice is shared and must not be
// modified.
func (s *Snapshot) NetworkGateways() []model.NetworkGateway { return s.gateways.all }

// Len returns the number of services in the snapshot, visible or not.
func (s *Snapshot) Len() int { return s.services.Len() }
