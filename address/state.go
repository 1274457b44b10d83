package address

import (
	"github.com/meshreg/meshreg/internal/derived"
	"github.com/meshreg/meshreg/model"
)

// state is what the index keeps of the source, from the events' payloads,
// and which resources each of its inputs produced.
type state struct {
	svcs     map[model.ServiceKey]*model.Service
	svcsByNS map[string]map[model.ServiceKey]*model.Service
	byHost   map[model.Hostname]map[model.ServiceKey]*model.Service
	wls      map[model.WorkloadKey]*model.WorkloadInstance
	wlsByNS  map[string]map[model.WorkloadKey]*model.WorkloadInstance
	// eps are each service's endpoints, as its latest endpoints event
	// carried them (registry.EndpointsEvent.All).
	eps     map[model.ServiceKey][]*model.Endpoint
	entries map[entryRef]map[model.ServiceKey]struct{}
	// refs holds, per selectorless Kubernetes Service, the pods its
	// slices name (targetRef), and podRefs the reverse.
	refs     map[model.ServiceKey][]model.WorkloadKey
	podRefs  map[model.WorkloadKey]map[model.ServiceKey]struct{}
	gateways []model.NetworkGateway
	// gwSources are the Gateways the network gateways come from.
	gwSources map[model.NetworkGateway]model.GatewayKey
	// remote holds, per service key, the workloads on other networks
	// that back it, by uid (Options.MultiNetwork); lent holds what each
	// input lent, as "service\x00uid" keys.
	remote map[string]map[string]remoteBacking
	lent   map[source][]string
	// meta is the cluster metadata, config the config cluster as the
	// index last built with it.
	meta      *meta
	config    model.ClusterID
	produced  map[source][]string
	diags     map[source][]model.Diagnostic
	synced    bool
	allDiags  []model.Diagnostic
	metaDiags []model.Diagnostic
	// deps are what each derivation read beyond what its key implies.
	deps readers
}

// readers are the derivations' recorded dependencies (dep): a
// workload's (its network's gateway is implied), a ServiceEntry's
// endpoints' and a service's.
type readers struct {
	workloads *derived.Deps[model.WorkloadKey, dep]
	entries   *derived.Deps[entryRef, dep]
	services  *derived.Deps[model.ServiceKey, dep]
}

// users marks dirty every derivation that read dp.
func (r readers) users(dp dep, d *dirty) {
	r.workloads.Users(dp, func(k model.WorkloadKey) { d.workloads[k] = struct{}{} })
	r.entries.Users(dp, func(k entryRef) { d.entries[k] = struct{}{} })
	r.services.Users(dp, func(k model.ServiceKey) { d.services[k] = struct{}{} })
}

// source is an input of the index: a workload ('w'), a service and the
// split-horizon workloads that stand for its workloads on other
// networks ('s'), a ServiceEntry's own endpoints ('e'), a Kubernetes
// Service's slice endpoints that name no pod ('l'), or the network
// gateways ('g').
type source struct {
	kind byte
	key  string
}

func newState() *state {
	return &state{
		svcs:     map[model.ServiceKey]*model.Service{},
		svcsByNS: map[string]map[model.ServiceKey]*model.Service{},
		byHost:   map[model.Hostname]map[model.ServiceKey]*model.Service{},
		wls:      map[model.WorkloadKey]*model.WorkloadInstance{},
		wlsByNS:  map[string]map[model.WorkloadKey]*model.WorkloadInstance{},
		eps:      map[model.ServiceKey][]*model.Endpoint{},
		entries:  map[entryRef]map[model.ServiceKey]struct{}{},
		refs:     map[model.ServiceKey][]model.WorkloadKey{},
		podRefs:  map[model.WorkloadKey]map[model.ServiceKey]struct{}{},
		meta:     newMeta(),
		remote:   map[string]map[string]remoteBacking{},
		lent:     map[source][]string{},
		produced: map[source][]string{},
		diags:    map[source][]model.Diagnostic{},
		deps: readers{workloads: derived.NewDeps[model.WorkloadKey, dep](), entries: derived.NewDeps[entryRef, dep](),
			services: derived.NewDeps[model.ServiceKey, dep]()},
	}
}

func isEntry(s *model.Service) bool { return s != nil && s.Provider == model.External }

// dirty is what a batch makes the index rebuild.
type dirty struct {
	workloads map[model.WorkloadKey]struct{}
	services  map[model.ServiceKey]struct{}
	entries   map[entryRef]struct{}
	// slices are the Kubernetes Services whose endpoints to read again:
	// for the workloads of slice endpoints without a pod, and the pods
	// a selectorless Service's slices name.
	slices   map[model.ServiceKey]struct{}
	gateways bool
}
