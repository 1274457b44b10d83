package aggregate

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// merger folds the events of several registries into one store: services
// merged per key across shards with precedence applied, endpoints kept per
// shard, workloads by key. The aggregate has one merger over every
// registry, and one per cluster that a cluster-scoped subscriber asked for.
type merger struct {
	st *mergedStore

	// mu serialises writes from the member subscriptions, which deliver
	// on goroutines of their own, and guards contrib.
	mu sync.Mutex
	// contrib holds each shard's version of a service.
	contrib map[model.ServiceKey]shards.Map[*model.Service]
	// raw holds each shard's endpoints of a service as its registry
	// published them. The store gets them without the endpoints of ports
	// the merged service does not have: when clusters disagree on ports,
	// the merged service's ports rule (ARCHITECTURE.md decision 8).
	raw map[model.ServiceKey]shards.Map[rawList]
}

// rawList is a shard's endpoints of a service as its registry published
// them. kept says that the store was handed the list itself, every
// endpoint having a port of the merged service (or the service being
// absent): a change of the merged service's ports pushes every shard's
// list again (setContribution), so kept always speaks of the current
// ports, and the endpoints a new list shares with a kept one, at the same
// place, need no second look (pushEndpoints).
type rawList struct {
	eps  []*model.Endpoint
	kept bool
}

func newMerger() *merger {
	return &merger{
		st:      newMergedStore(),
		contrib: map[model.ServiceKey]shards.Map[*model.Service]{},
		raw:     map[model.ServiceKey]shards.Map[rawList]{},
	}
}

// apply folds one member event in. The caller holds m.mu.
func (m *merger) apply(shard model.ShardKey, ev registry.Event) {
	switch e := ev.(type) {
	case registry.ServiceEvent:
		svc := e.Service()
		key := svc.Key()
		if e.Type == model.EventDelete {
			m.setContribution(key, shard, nil)
		} else {
			m.setContribution(key, shard, svc)
		}
	case registry.EndpointsEvent:
		m.setEndpoints(e.Service, e.Shard, e.Endpoints)
	case registry.WorkloadEvent:
		if e.Type == model.EventDelete {
			m.st.deleteWorkload(e.Previous.Key())
		} else {
			m.st.upsertWorkload(e.Current)
		}
	}
}

// setContribution records shard's version of a service (nil: none) and
// republishes the merged service. The caller holds m.mu.
func (m *merger) setContribution(key model.ServiceKey, shard model.ShardKey, svc *model.Service) {
	byShard := m.contrib[key]
	if svc == nil {
		if !byShard.Has(shard) {
			return
		}
		byShard.Delete(shard)
	} else {
		byShard.Set(shard, svc)
	}
	if byShard.Len() == 0 {
		delete(m.contrib, key)
	} else {
		m.contrib[key] = byShard
	}
	merged, diags := mergeService(byShard)
	m.st.setDiagnostics(key.String(), diags)
	prev := m.st.ServiceByKey(key)
	if merged == nil {
		m.st.deleteService(key)
		return
	}
	m.st.upsertService(merged)
	if prev == nil || !slices.Equal(prev.Ports, merged.Ports) {
		byShard := m.raw[key]
		for _, shard := range byShard.Keys() {
			m.pushEndpoints(key, shard, merged, rawList{})
		}
	}
}

// setEndpoints records a shard's endpoints of a service (empty: none) and
// hands the store those the merged service has ports for. The caller
// holds m.mu.
func (m *merger) setEndpoints(key model.ServiceKey, shard model.ShardKey, eps []*model.Endpoint) {
	byShard := m.raw[key]
	prev, _ := byShard.Get(shard)
	if len(eps) == 0 {
		byShard.Delete(shard)
	} else {
		byShard.Set(shard, rawList{eps: eps})
	}
	if byShard.Len() == 0 {
		delete(m.raw, key)
	} else {
		m.raw[key] = byShard
	}
	m.pushEndpoints(key, shard, m.st.ServiceByKey(key), prev)
}

// pushEndpoints hands the store a shard's endpoints of a service, keeping
// those of ports svc has (all of them while svc is absent: the store holds
// them back until it arrives). When every endpoint is kept, which is the
// usual case, the member's published list itself is handed on: it is
// sorted, so the store keeps it without writing to it. prev is the
// shard's list before this one, if it was kept: an endpoint that prev
// holds where a index.Trail along it looks (at the same index, or a few
// places on) is not read again. A change to a few endpoints of a long
// list (a readiness flip, a pod's labels, an endpoint added or removed)
// comes so, and the endpoints it leaves alone are the ones least likely
// to be in the processor's cache. The caller holds m.mu.
func (m *merger) pushEndpoints(key model.ServiceKey, shard model.ShardKey, svc *model.Service, prev rawList) {
	byShard := m.raw[key]
	raw, ok := byShard.Get(shard)
	var trail index.Trail // along prev, if kept: its endpoints have ports svc has
	if prev.kept {
		trail = index.NewTrail(prev.eps)
	}
	served := func(ep *model.Endpoint) bool {
		return slices.ContainsFunc(svc.Ports, func(p model.Port) bool { return p.Name == ep.ServicePortName })
	}
	first := len(raw.eps) // the first endpoint left out, if any
	if svc != nil {
		for i, ep := range raw.eps {
			if !trail.Holds(i, ep) && !served(ep) {
				first = i
				break
			}
		}
	}
	kept := first == len(raw.eps)
	if ok {
		raw.kept = kept
		byShard.Set(shard, raw) // in place: the shard is present
	}
	if kept {
		m.st.setEndpoints(shard, key, raw.eps)
		return
	}
	// The endpoints before first were read and kept already.
	out := append(make([]*model.Endpoint, 0, len(raw.eps)), raw.eps[:first]...)
	for i := first + 1; i < len(raw.eps); i++ {
		if ep := raw.eps[i]; trail.Holds(i, ep) || served(ep) {
			out = append(out, ep)
		}
	}
	m.st.setEndpoints(shard, key, out)
}

// removeShard drops everything a shard contributed and returns the
// workloads it deleted. The caller holds m.mu.
func (m *merger) removeShard(shard model.ShardKey) []*model.WorkloadInstance {
	keys := make([]model.ServiceKey, 0)
	for key, byShard := range m.contrib {
		if byShard.Has(shard) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		m.setContribution(key, shard, nil)
	}
	keys = keys[:0]
	for key, byShard := range m.raw {
		if byShard.Has(shard) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		m.setEndpoints(key, shard, nil)
	}
	var deleted []*model.WorkloadInstance
	for _, w := range m.st.Workloads() {
		if workloadShard(w) == shard {
			m.st.deleteWorkload(w.Key())
			deleted = append(deleted, w)
		}
	}
	return deleted
}

// prune drops what a shard contributed that reg no longer has: used when a
// replacement registry has synced, to remove what only the old one knew.
// It returns the workloads it deleted. The caller holds m.mu.
func (m *merger) prune(shard model.ShardKey, reg registry.Discovery) []*model.WorkloadInstance {
	keys := make([]model.ServiceKey, 0)
	for key, byShard := range m.contrib {
		if byShard.Has(shard) && reg.ServiceByKey(key) == nil {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	for _, key := range keys {
		m.setContribution(key, shard, nil)
	}
	var stale []model.ServiceKey
	for key, byShard := range m.raw {
		if byShard.Has(shard) && len(reg.Endpoints(key, registry.EndpointQuery{})) == 0 {
			stale = append(stale, key)
		}
	}
	slices.SortFunc(stale, model.ServiceKey.Compare)
	for _, key := range stale {
		m.setEndpoints(key, shard, nil)
	}
	var deleted []*model.WorkloadInstance
	for _, w := range m.st.Workloads() {
		if workloadShard(w) != shard {
			continue
		}
		if !slices.ContainsFunc(workloadsAt(reg, w), func(x *model.WorkloadInstance) bool { return x.Key() == w.Key() }) {
			m.st.deleteWorkload(w.Key())
			deleted = append(deleted, w)
		}
	}
	return deleted
}

func workloadsAt(reg registry.Discovery, w *model.WorkloadInstance) []*model.WorkloadInstance {
	if len(w.Endpoint.Addresses) > 0 {
		return reg.WorkloadsByIP(w.Endpoint.Addresses[0])
	}
	return reg.Workloads()
}

// workloadShard returns the shard a workload instance comes from: Pods
// from the Kubernetes registry of their cluster, WorkloadEntries from the
// External one.
func workloadShard(w *model.WorkloadInstance) model.ShardKey {
	p := model.Kubernetes
	if w.Kind == model.KindWorkloadEntry {
		p = model.External
	}
	return model.ShardKey{Provider: p, Cluster: w.Endpoint.Cluster}
}

// mergeService merges the versions of one service (one key) from several
// shards, and says what it overrode.
//
// Kubernetes versions win over External ones (ARCHITECTURE.md decision 1): the
// losing ServiceEntries are reported and contribute nothing. Versions of
// the winning provider are merged: the first by cluster ID gives every
// attribute, VIPs and external addresses are kept per cluster, service
// accounts are unioned, and a version whose ports or other attributes
// (resolution, mesh-external, external name, exportTo) differ from the
// first's is reported. Ordering by cluster ID, not by arrival, keeps the result a
// function of the objects alone.
func mergeService(byShard shards.Map[*model.Service]) (*model.Service, []model.Diagnostic) {
	if byShard.Len() == 0 {
		return nil, nil
	}
	var (
		firstShard model.ShardKey
		first      *model.Service // Kubernetes first (model.ShardKey.Compare)
		diags      []model.Diagnostic
		winners    []*model.Service
		winShards  []model.ShardKey
	)
	for sh, svc := range byShard.All() {
		if first == nil {
			firstShard, first = sh, svc
		}
		if svc.Provider == first.Provider {
			winners = append(winners, svc)
			winShards = append(winShards, sh)
			continue
		}
		diags = append(diags, model.Diagnostic{
			Severity: model.Warning, Kind: "ServiceEntry", Namespace: svc.Namespace, Name: svc.Name,
			Cluster: sh.Cluster,
			Message: fmt.Sprintf("host %s is also a Kubernetes Service in namespace %s (%s); the Kubernetes Service takes precedence, this entry's service and endpoints for the host are ignored",
				svc.Hostname, svc.Namespace, first.Name),
		})
	}
	if len(winners) == 1 {
		return first, diags
	}
	out := first.DeepCopy()
	accounts := slices.Clone(first.ServiceAccounts)
	for i, svc := range winners[1:] {
		sh := winShards[i+1]
		for c, vips := range svc.Addresses {
			if out.Addresses == nil {
				out.Addresses = map[model.ClusterID][]netip.Prefix{}
			}
			if _, ok := out.Addresses[c]; !ok {
				out.Addresses[c] = slices.Clone(vips)
			}
		}
		for c, addrs := range svc.ExternalAddresses {
			if out.ExternalAddresses == nil {
				out.ExternalAddresses = map[model.ClusterID][]string{}
			}
			if _, ok := out.ExternalAddresses[c]; !ok {
				out.ExternalAddresses[c] = slices.Clone(addrs)
			}
		}
		accounts = append(accounts, svc.ServiceAccounts...)
		if differ := attributeDifferences(first, svc); differ != "" {
			diags = append(diags, model.Diagnostic{
				Severity: model.Warning, Kind: kindOf(svc), Namespace: svc.Namespace, Name: svc.Name,
				Cluster: sh.Cluster,
				Message: fmt.Sprintf("%s differ from cluster %s's; the merged service uses cluster %s's",
					differ, firstShard.Cluster, firstShard.Cluster),
			})
		}
		if !slices.Equal(svc.Ports, first.Ports) {
			diags = append(diags, model.Diagnostic{
				Severity: model.Warning, Kind: kindOf(svc), Namespace: svc.Namespace, Name: svc.Name,
				Cluster: sh.Cluster,
				Message: fmt.Sprintf("ports %s differ from cluster %s's %s; the merged service uses cluster %s's ports",
					portList(svc.Ports), firstShard.Cluster, portList(first.Ports), firstShard.Cluster),
			})
		}
	}
	slices.Sort(accounts)
	out.ServiceAccounts = slices.Compact(accounts)
	return out, diags
}

// attributeDifferences names the attributes of svc, one cluster's view of
// a service, that differ from first's, the view the merged service takes
// them from (ports aside, which have a diagnostic of their own), with
// both values: "resolution Passthrough (ClientSideLB), exportTo [.] ([*])".
// It returns "" when they agree.
func attributeDifferences(first, svc *model.Service) string {
	var out []string
	differ := func(name string, got, want any) {
		out = append(out, fmt.Sprintf("%s %v (%v)", name, got, want))
	}
	if svc.Resolution != first.Resolution {
		differ("resolution", svc.Resolution, first.Resolution)
	}
	if svc.MeshExternal != first.MeshExternal {
		differ("meshExternal", svc.MeshExternal, first.MeshExternal)
	}
	if svc.ExternalName != first.ExternalName {
		differ("externalName", quoted(svc.ExternalName), quoted(first.ExternalName))
	}
	if !slices.Equal(exportTo(svc), exportTo(first)) {
		differ("exportTo", exportTo(svc), exportTo(first))
	}
	return strings.Join(out, ", ")
}

// exportTo returns a service's exportTo as the dump shows it: sorted,
// ["*"] when empty.
func exportTo(svc *model.Service) []string {
	if len(svc.ExportTo) == 0 {
		return []string{"*"}
	}
	return slices.Sorted(slices.Values(svc.ExportTo))
}

func quoted(s string) string { return strconv.Quote(s) }

func kindOf(svc *model.Service) string {
	if svc.Provider == model.External {
		return "ServiceEntry"
	}
	return "Service"
}

func portList(ps []model.Port) string {
	s := "["
	for i, p := range ps {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s:%d/%s", p.Name, p.Port, p.Protocol)
	}
	return s + "]"
}
