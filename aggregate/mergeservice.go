package aggregate

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
)

// mergeService merges the versions of one service (one key) from several
// shards, and says what it overrode.
//
// Kubernetes versions win over External ones (ARCHITECTURE.md decision 1,
// model.ComparePrecedence): byShard visits them first, in the order of
// model.ShardKey.Compare, which ranks providers by the same rule. The
// losing ServiceEntries are reported and contribute nothing (the store
// hides their shards' endpoints: see visible). Versions of
// the winning provider are merged: the first by cluster ID gives every
// attribute, VIPs, external addresses and exports (Kubernetes
// Multi-Cluster Services) are kept per cluster, service accounts are
// unioned, and a version whose ports or other attributes
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
	for _, sh := range winShards[1:] {
		if !slices.Contains(out.Clusters, sh.Cluster) {
			out.Clusters = append(out.Clusters, sh.Cluster)
		}
	}
	slices.Sort(out.Clusters)
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
		for c, t := range svc.Exports {
			if out.Exports == nil {
				out.Exports = map[model.ClusterID]time.Time{}
			}
			if _, ok := out.Exports[c]; !ok {
				out.Exports[c] = t
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
