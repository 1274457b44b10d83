package address

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// state is what the index keeps of the source, from the events' payloads,
// and which resources each of its inputs produced.
type state struct {
	svcs     map[model.ServiceKey]*model.Service
	svcsByNS map[string]map[model.ServiceKey]*model.Service
	byHost   map[model.Hostname]map[model.ServiceKey]*model.Service
	wls      map[model.WorkloadKey]*model.WorkloadInstance
	wlsByNS  map[string]map[model.WorkloadKey]*model.WorkloadInstance
	entries  map[entryRef]map[model.ServiceKey]struct{}
	// refs holds, per selectorless Kubernetes Service, the pods its
	// slices name (targetRef), and podRefs the reverse.
	refs     map[model.ServiceKey][]model.WorkloadKey
	podRefs  map[model.WorkloadKey]map[model.ServiceKey]struct{}
	gateways []model.NetworkGateway
	// networks are the clusters' networks (Options.ClusterNetwork) as
	// the index last built with them.
	networks  map[model.ClusterID]model.NetworkID
	produced  map[source][]string
	diags     map[source][]model.Diagnostic
	synced    bool
	allDiags  []model.Diagnostic
	metaDiags []model.Diagnostic
}

// source is an input of the index: a workload, a service, a
// ServiceEntry's own endpoints, or the network gateways.
type source struct {
	kind byte // 'w', 's', 'e', 'g'
	key  string
}

func newState() *state {
	return &state{
		svcs:     map[model.ServiceKey]*model.Service{},
		svcsByNS: map[string]map[model.ServiceKey]*model.Service{},
		byHost:   map[model.Hostname]map[model.ServiceKey]*model.Service{},
		wls:      map[model.WorkloadKey]*model.WorkloadInstance{},
		wlsByNS:  map[string]map[model.WorkloadKey]*model.WorkloadInstance{},
		entries:  map[entryRef]map[model.ServiceKey]struct{}{},
		refs:     map[model.ServiceKey][]model.WorkloadKey{},
		podRefs:  map[model.WorkloadKey]map[model.ServiceKey]struct{}{},
		networks: map[model.ClusterID]model.NetworkID{},
		produced: map[source][]string{},
		diags:    map[source][]model.Diagnostic{},
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

// apply takes a batch of marks into the state and returns the next
// snapshot and its events.
func (x *Index) apply(m marks) (*Snapshot, []Event) {
	st := x.st
	d := dirty{workloads: map[model.WorkloadKey]struct{}{}, services: map[model.ServiceKey]struct{}{},
		entries: map[entryRef]struct{}{}, slices: map[model.ServiceKey]struct{}{}}
	for key, sm := range m.services {
		old := st.svcs[key]
		if sm.service {
			x.setService(key, sm.svc)
			for k := range st.byHost[key.Hostname] {
				d.services[k] = struct{}{}
			}
			d.services[key] = struct{}{}
			for _, s := range [...]*model.Service{old, sm.svc} {
				if s == nil || len(s.Selector) == 0 {
					continue
				}
				for wk, w := range st.wlsByNS[key.Namespace] {
					if model.SelectorMatches(s.Selector, w.Endpoint.Labels) {
						d.workloads[wk] = struct{}{}
					}
				}
			}
		}
		for _, s := range [...]*model.Service{old, st.svcs[key]} {
			if isEntry(s) {
				d.entries[entryRef{s.Namespace, s.Name}] = struct{}{}
			} else if s != nil {
				d.slices[key] = struct{}{}
			}
		}
	}
	for key, w := range m.workloads {
		if old := st.wls[key]; old != nil {
			index.RemoveFrom(st.wlsByNS, key.Namespace, key)
		}
		if w == nil {
			delete(st.wls, key)
		} else {
			st.wls[key] = w
			index.AddTo(st.wlsByNS, key.Namespace, key, w)
		}
		d.workloads[key] = struct{}{}
	}
	if m.synced {
		st.synced = true
	}
	if m.meta {
		st.metaDiags = x.opts.Metadata.Diagnostics()
		st.gateways = x.opts.Metadata.NetworkGateways()
		d.gateways = true
	}
	if x.networksChanged(m) || d.gateways || m.meta {
		// A cluster's network, a network's gateway, or a namespace's or
		// Gateway's waypoint may change anything.
		for k := range st.wls {
			d.workloads[k] = struct{}{}
		}
		for k := range st.svcs {
			d.services[k] = struct{}{}
		}
		for r := range st.entries {
			d.entries[r] = struct{}{}
		}
		for k, s := range st.svcs {
			if !isEntry(s) {
				d.slices[k] = struct{}{}
			}
		}
	}
	return x.rebuild(d, m.meta)
}

// networksChanged reports whether the network of a cluster the index
// knows changed since it last looked (a cluster's network can change at
// run time: kube.Controller.Network follows its system namespace), and
// records the networks of the clusters the marks bring.
func (x *Index) networksChanged(m marks) bool {
	st := x.st
	changed := false
	for c, n := range st.networks {
		if now := x.opts.ClusterNetwork(c); now != n {
			st.networks[c] = now
			changed = true
		}
	}
	see := func(c model.ClusterID) {
		if _, ok := st.networks[c]; !ok {
			st.networks[c] = x.opts.ClusterNetwork(c)
		}
	}
	for _, sm := range m.services {
		if sm.svc != nil {
			for c := range sm.svc.Addresses {
				see(c)
			}
		}
	}
	for _, w := range m.workloads {
		if w != nil {
			see(w.Endpoint.Cluster)
		}
	}
	return changed
}

// setService records a service, nil to delete it.
func (x *Index) setService(key model.ServiceKey, s *model.Service) {
	st := x.st
	if old := st.svcs[key]; old != nil {
		index.RemoveFrom(st.svcsByNS, key.Namespace, key)
		index.RemoveFrom(st.byHost, key.Hostname, key)
		if isEntry(old) {
			index.RemoveFrom(st.entries, entryRef{old.Namespace, old.Name}, key)
		}
	}
	if s == nil {
		delete(st.svcs, key)
		return
	}
	st.svcs[key] = s
	index.AddTo(st.svcsByNS, key.Namespace, key, s)
	index.AddTo(st.byHost, key.Hostname, key, s)
	if isEntry(s) {
		index.AddTo(st.entries, entryRef{s.Namespace, s.Name}, key, struct{}{})
	}
}

func (x *Index) rebuild(d dirty, metaChanged bool) (*Snapshot, []Event) {
	st := x.st
	prev := x.snap.Load()
	e := &edit{addrs: prev.addrs.Edit(), byIP: prev.byIP.Edit(), bySvc: prev.bySvc.Edit(), events: map[string]model.EventType{}}
	b := x.builder()
	diagsChanged := metaChanged
	sliceWorkloads := map[model.ServiceKey][]*workloadapi.Address{}
	for key := range d.slices {
		var eps []*model.Endpoint
		s := st.svcs[key]
		if s != nil {
			eps = x.src.Endpoints(key, registry.EndpointQuery{})
		}
		for _, w := range b.sliceWorkloads(s, eps) {
			sliceWorkloads[key] = append(sliceWorkloads[key], workloadAddress(w))
		}
		var pods []model.WorkloadKey
		if s != nil && s.Selector == nil {
			pods = targetRefPods(eps)
		}
		for _, pk := range st.refs[key] {
			index.RemoveFrom(st.podRefs, pk, key)
			d.workloads[pk] = struct{}{}
		}
		for _, pk := range pods {
			index.AddTo(st.podRefs, pk, key, struct{}{})
			d.workloads[pk] = struct{}{}
		}
		if len(pods) == 0 {
			delete(st.refs, key)
		} else {
			st.refs[key] = pods
		}
	}
	for key := range d.workloads {
		src := source{'w', key.String()}
		var out []*workloadapi.Address
		var diags []model.Diagnostic
		if w := st.wls[key]; w != nil {
			wl, problem := b.workload(w)
			out = append(out, workloadAddress(wl))
			if problem != "" {
				diags = append(diags, diagnostic(w.Kind.String(), w.Namespace, w.Name, w.Endpoint.Cluster, problem))
			}
		}
		diagsChanged = x.produce(e, src, out, diags) || diagsChanged
	}
	for key := range d.services {
		src := source{'s', key.String()}
		var out []*workloadapi.Address
		var diags []model.Diagnostic
		if s := st.svcs[key]; s != nil {
			best := canonicalOf(slices.Collect(maps.Values(st.byHost[key.Hostname])))
			if svc, problem := b.service(s, best == s); svc != nil {
				out = append(out, serviceAddress(svc))
				if problem != "" {
					kind := "Service"
					if isEntry(s) {
						kind = "ServiceEntry"
					}
					diags = append(diags, diagnostic(kind, s.Namespace, s.Name, "", problem))
				}
			}
		}
		diagsChanged = x.produce(e, src, out, diags) || diagsChanged
	}
	for ref := range d.entries {
		var hosts []hostEndpoints
		for _, key := range slices.SortedFunc(maps.Keys(st.entries[ref]), model.ServiceKey.Compare) {
			hosts = append(hosts, hostEndpoints{svc: st.svcs[key], eps: x.src.Endpoints(key, registry.EndpointQuery{})})
		}
		var out []*workloadapi.Address
		for _, w := range b.entryWorkloads(ref, hosts) {
			out = append(out, workloadAddress(w))
		}
		x.produce(e, source{'e', ref.ns + "/" + ref.name}, out, nil)
	}
	for key := range d.slices {
		x.produce(e, source{'l', key.String()}, sliceWorkloads[key], nil)
	}
	if d.gateways {
		var out []*workloadapi.Address
		for _, g := range st.gateways {
			out = append(out, workloadAddress(b.gatewayWorkload(g)))
		}
		x.produce(e, source{'g', ""}, out, nil)
	}
	if diagsChanged {
		st.allDiags = slices.Clone(st.metaDiags)
		for _, ds := range st.diags {
			st.allDiags = append(st.allDiags, ds...)
		}
		slices.SortFunc(st.allDiags, model.CompareDiagnostics)
	}
	snap := &Snapshot{addrs: e.addrs.Done(), byIP: e.byIP.Done(), bySvc: e.bySvc.Done(), synced: prev.synced || st.synced && x.opts.Metadata.HasSynced(), diags: st.allDiags}
	events := make([]Event, 0, len(e.events))
	for k, t := range e.events {
		events = append(events, Event{Key: k, Type: t})
	}
	slices.SortFunc(events, func(a, b Event) int { return strings.Compare(a.Key, b.Key) })
	return snap, events
}

func diagnostic(kind, ns, name string, cluster model.ClusterID, msg string) model.Diagnostic {
	return model.Diagnostic{Severity: model.Warning, Kind: kind, Namespace: ns, Name: name, Cluster: cluster, Message: msg}
}

// builder returns the builder over the current state.
func (x *Index) builder() *builder {
	st := x.st
	gwCache := map[model.NetworkID]*workloadapi.GatewayAddress{}
	return &builder{
		opts:     x.opts,
		meta:     x.opts.Metadata,
		services: func(ns string) map[model.ServiceKey]*model.Service { return st.svcsByNS[ns] },
		named: func(w model.WorkloadKey) []*model.Service {
			var out []*model.Service
			for k := range st.podRefs[w] {
				if s := st.svcs[k]; s != nil {
					out = append(out, s)
				}
			}
			return out
		},
		gateway: func(n model.NetworkID) *workloadapi.GatewayAddress {
			if g, ok := gwCache[n]; ok {
				return g
			}
			g := gatewayAddress(st.gateways, n)
			gwCache[n] = g
			return g
		},
	}
}

// produce sets the resources an input now produces, removing those it no
// longer does, and its diagnostics; it reports whether the diagnostics
// changed.
func (x *Index) produce(e *edit, src source, out []*workloadapi.Address, diags []model.Diagnostic) bool {
	st := x.st
	keys := make([]string, 0, len(out))
	for _, a := range out {
		k := ResourceKey(a)
		keys = append(keys, k)
		e.put(k, a)
	}
	for _, k := range st.produced[src] {
		if !slices.Contains(keys, k) {
			e.remove(k)
		}
	}
	if len(keys) == 0 {
		delete(st.produced, src)
	} else {
		st.produced[src] = keys
	}
	old := st.diags[src]
	if len(diags) == 0 {
		delete(st.diags, src)
	} else {
		st.diags[src] = diags
	}
	return !sameDiags(old, diags)
}

// ResourceKey returns a resource's key: a workload's uid, a service's
// "namespace/hostname".
func ResourceKey(a *workloadapi.Address) string {
	if w := a.GetWorkload(); w != nil {
		return w.Uid
	}
	s := a.GetService()
	return serviceKey(s.Namespace, s.Hostname)
}
