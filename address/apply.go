package address

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
)

// apply takes a batch of marks into the state and returns the next
// snapshot and its events.
func (x *Index) apply(m marks) (*Snapshot, []Event) {
	st := x.st
	d := dirty{workloads: map[model.WorkloadKey]struct{}{}, services: map[model.ServiceKey]struct{}{},
		entries: map[entryRef]struct{}{}, slices: map[model.ServiceKey]struct{}{}}
	for key, sm := range m.services {
		old := st.svcs[key]
		if sm.Endpoints {
			if len(sm.Eps) == 0 {
				delete(st.eps, key)
			} else {
				st.eps[key] = sm.Eps
			}
		}
		if sm.Service {
			x.setService(key, sm.Svc)
			for k := range st.byHost[key.Hostname] {
				d.services[k] = struct{}{}
			}
			d.services[key] = struct{}{}
			for _, s := range [...]*model.Service{old, sm.Svc} {
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
	changes := metaChanges{waypoints: map[model.GatewayKey]struct{}{}}
	for id, c := range m.clusters {
		if st.meta.setCluster(id, c, changes.waypoints) {
			changes.clusters = append(changes.clusters, id)
		}
	}
	for key, ns := range m.namespaces {
		if st.meta.setNamespace(key, ns) {
			changes.namespaces = append(changes.namespaces, key)
		}
	}
	for key, gw := range m.gateways {
		waypoint, diags, network := st.meta.setGateway(key, gw)
		if waypoint {
			changes.waypoints[key] = struct{}{}
		}
		changes.diags = changes.diags || diags
		changes.network = changes.network || network
	}
	metaChanged := m.first || changes.any()
	if !metaChanged {
		return x.rebuild(d, false)
	}
	st.metaDiags = st.meta.diagnostics()
	slices.SortFunc(st.metaDiags, model.CompareDiagnostics)
	// A new config cluster, or a new network of it, changes which
	// workloads and services the index sends as themselves: everything.
	all := m.first
	if config := x.configCluster(); config != st.config {
		st.config, all = config, true
	}
	all = all || slices.Contains(changes.clusters, st.config)
	if all || changes.network || len(changes.clusters) > 0 {
		gws, sources := st.meta.networkGateways(st.config, x.opts.MultiNetwork)
		changes.gatewayNetworks = changedNetworks(st.gateways, gws, st.gwSources, sources)
		d.gateways = all || len(changes.gatewayNetworks) > 0
		st.gateways, st.gwSources = gws, sources
	}
	if all {
		for k := range st.wls {
			d.workloads[k] = struct{}{}
		}
		for k, s := range st.svcs {
			d.markService(k, s)
		}
	} else {
		x.markUsers(changes, &d)
	}
	return x.rebuild(d, true)
}

// configCluster is the config cluster: Options.ConfigCluster, else the
// first cluster the metadata knows.
func (x *Index) configCluster() model.ClusterID {
	if x.opts.ConfigCluster != "" {
		return x.opts.ConfigCluster
	}
	return x.st.meta.firstCluster()
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
	defer func() {
		x.rederived.workloads.Add(int64(len(d.workloads)))
		x.rederived.services.Add(int64(len(d.services)))
		x.rederived.entries.Add(int64(len(d.entries)))
		x.rederived.slices.Add(int64(len(d.slices)))
	}()
	prev := x.snap.Load()
	e := &edit{addrs: prev.addrs.Edit(), byIP: prev.byIP.Edit(), bySvc: prev.bySvc.Edit(), events: map[string]model.EventType{}}
	b := x.builder()
	diagsChanged := metaChanged
	sliceWorkloads := map[model.ServiceKey][]*workloadapi.Workload{}
	for key := range d.slices {
		var eps []*model.Endpoint
		s := st.svcs[key]
		if s != nil {
			eps = st.eps[key]
		}
		sliceWorkloads[key] = b.sliceWorkloads(s, eps)
		var pods []model.WorkloadKey
		if s != nil {
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
	// Workloads first: those on other networks lend the global services
	// they back their identities and capacity (scope.go), so the services
	// they back, before and after, are built after them.
	for key := range d.workloads {
		src := source{'w', key.String()}
		var out []*workloadapi.Workload
		var diags []model.Diagnostic
		if w := st.wls[key]; w != nil {
			var wl *workloadapi.Workload
			var problem string
			reads := st.meta.recording(func() { wl, problem = b.workload(w) })
			st.deps.workloads.Set(key, slices.DeleteFunc(reads, dep.isNetwork))
			out = append(out, wl)
			if problem != "" {
				diags = append(diags, diagnostic(w.Kind.String(), w.Namespace, w.Name, w.Endpoint.Cluster, problem))
			}
		} else {
			st.deps.workloads.Delete(key)
		}
		diagsChanged = x.produce(e, src, x.admit(b, src, out, &d), diags) || diagsChanged
	}
	for ref := range d.entries {
		var hosts []hostEndpoints
		for _, key := range slices.SortedFunc(maps.Keys(st.entries[ref]), model.ServiceKey.Compare) {
			hosts = append(hosts, hostEndpoints{svc: st.svcs[key], eps: st.eps[key]})
		}
		src := source{'e', ref.ns + "/" + ref.name}
		var ws []*workloadapi.Workload
		st.deps.entries.Set(ref, st.meta.recording(func() { ws = b.entryWorkloads(ref, hosts) }))
		x.produce(e, src, x.admit(b, src, ws, &d), nil)
	}
	for key := range d.slices {
		src := source{'l', key.String()}
		x.produce(e, src, x.admit(b, src, sliceWorkloads[key], &d), nil)
	}
	for key := range d.services {
		src := source{'s', key.String()}
		var out []*workloadapi.Workload
		var svcOut *workloadapi.Service
		var diags []model.Diagnostic
		if s := st.svcs[key]; s != nil {
			st.deps.services.Set(key, st.meta.recording(func() { svcOut, out, diags = x.deriveService(b, src, s) }))
		} else {
			st.deps.services.Delete(key)
		}
		var res []*workloadapi.Address
		if svcOut != nil {
			res = append(res, serviceAddress(svcOut))
		}
		for _, w := range out {
			res = append(res, workloadAddress(w))
		}
		diagsChanged = x.produceAddresses(e, src, res, diags) || diagsChanged
	}
	if d.gateways {
		var out []*workloadapi.Workload
		for _, g := range st.gateways {
			out = append(out, b.gatewayWorkload(g))
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
	snap := &Snapshot{addrs: e.addrs.Done(), byIP: e.byIP.Done(), bySvc: e.bySvc.Done(), synced: prev.synced || st.synced, diags: st.allDiags}
	events := make([]Event, 0, len(e.events))
	for k, t := range e.events {
		events = append(events, Event{Key: k, Type: t})
	}
	slices.SortFunc(events, func(a, b Event) int { return strings.Compare(a.Key, b.Key) })
	return snap, events
}

// deriveService builds a service and, when it is global, the
// split-horizon workloads that stand for its workloads on other
// networks.
func (x *Index) deriveService(b *builder, src source, s *model.Service) (*workloadapi.Service, []*workloadapi.Workload, []model.Diagnostic) {
	st := x.st
	best := canonicalOf(slices.DeleteFunc(slices.Collect(maps.Values(st.byHost[s.Hostname])), func(s *model.Service) bool {
		_, sent, _ := b.scope.serviceClusters(s)
		return !sent // a Service the index does not hold reaches no one
	}))
	clusters, sent, global := b.scope.serviceClusters(s)
	svc, problem := b.service(s, best == s, clusters)
	if svc == nil || !sent {
		return nil, nil, nil
	}
	var out []*workloadapi.Workload
	if global {
		svc.SubjectAltNames = withRemoteIdentities(svc.SubjectAltNames, st.remote[src.key])
		out = x.splitHorizon(b, svc, st.remote[src.key])
	}
	var diags []model.Diagnostic
	if problem != "" {
		kind := "Service"
		if isEntry(s) {
			kind = "ServiceEntry"
		}
		diags = append(diags, diagnostic(kind, s.Namespace, s.Name, "", problem))
	}
	return svc, out, diags
}

// admit returns the workloads of an input that are sent as themselves
// (scope.admits). With MultiNetwork, the others lend the global services
// they back their backing (remoteBacking), and the services they backed
// before or back now are marked dirty.
func (x *Index) admit(b *builder, src source, ws []*workloadapi.Workload, d *dirty) []*workloadapi.Workload {
	st := x.st
	var kept []*workloadapi.Workload
	lent := map[string]remoteBacking{}
	for _, w := range ws {
		if b.scope.admits(model.ClusterID(w.ClusterId), model.NetworkID(w.Network)) {
			kept = append(kept, w)
			continue
		}
		if !b.scope.multi {
			continue
		}
		for svc := range w.Services {
			lent[svc+"\x00"+w.Uid] = backingOf(w, b.opts.TrustDomain)
		}
	}
	if len(lent) == 0 && len(st.lent[src]) == 0 {
		return kept
	}
	for _, k := range st.lent[src] {
		svc, uid, _ := strings.Cut(k, "\x00")
		if _, still := lent[k]; !still {
			index.RemoveFrom(st.remote, svc, uid)
		}
		markService(d, svc)
	}
	keys := make([]string, 0, len(lent))
	for k, r := range lent {
		svc, uid, _ := strings.Cut(k, "\x00")
		index.AddTo(st.remote, svc, uid, r)
		markService(d, svc)
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		delete(st.lent, src)
	} else {
		st.lent[src] = keys
	}
	return kept
}

// markService marks dirty the service of a resource key
// ("namespace/hostname").
func markService(d *dirty, key string) {
	ns, host, _ := strings.Cut(key, "/")
	d.services[model.ServiceKey{Namespace: ns, Hostname: model.Hostname(host)}] = struct{}{}
}

func diagnostic(kind, ns, name string, cluster model.ClusterID, msg string) model.Diagnostic {
	return model.Diagnostic{Severity: model.Warning, Kind: kind, Namespace: ns, Name: name, Cluster: cluster, Message: msg}
}

// builder returns the builder over the current state.
func (x *Index) builder() *builder {
	st := x.st
	gwCache := map[model.NetworkID]*workloadapi.GatewayAddress{}
	return &builder{
		opts:   x.opts,
		meta:   st.meta,
		config: st.config,
		scope: scope{multi: x.opts.MultiNetwork, config: st.config, local: st.meta.network(st.config),
			scopes: x.opts.ServiceScopes, meta: st.meta},
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
			if n != "" { // no network has no gateway
				st.meta.record(dep{network: n})
			}
			if g, ok := gwCache[n]; ok {
				return g
			}
			g := gatewayAddress(st.gateways, n)
			gwCache[n] = g
			return g
		},
	}
}
