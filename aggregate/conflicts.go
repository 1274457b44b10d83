package aggregate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
)

// Conflicts between the clusters that export a Service (Kubernetes
// Multi-Cluster Services), by the MCS API's rule: the properties of the
// oldest ServiceExport win (ties by cluster ID), and every other export
// whose Service disagrees with them is in conflict: a port of the same
// name with another number or protocol (ports of other names add up), or
// another type (headless or not). They are diagnostics only: nothing is
// written to the API (no Conflict condition), and the merged Service is
// merged as any other (see mergeService), as Istio merges it.

// setExportConflicts records the conflicts between a Service's exports.
// The caller holds m.mu.
func (m *merger) setExportConflicts(key model.ServiceKey, byShard shards.Map[*model.Service]) {
	diags := exportConflicts(byShard)
	if len(diags) == 0 && !m.conflicted[key] {
		return
	}
	if len(diags) == 0 {
		delete(m.conflicted, key)
	} else {
		m.conflicted[key] = true
	}
	m.st.SetDiagnostics("ServiceExport/"+key.String(), diags)
}

// export is one cluster's export of a Service: the cluster's version of
// the Service and the export's creation time.
type export struct {
	cluster model.ClusterID
	svc     *model.Service
	created time.Time
}

// exportConflicts returns a Warning for each export of a Service that
// conflicts with the oldest one; none when fewer than two clusters export
// it.
func exportConflicts(byShard shards.Map[*model.Service]) []model.Diagnostic {
	var exports []export
	for sh, svc := range byShard.All() {
		if t, ok := svc.Exports[sh.Cluster]; ok && sh.Provider == model.Kubernetes {
			exports = append(exports, export{cluster: sh.Cluster, svc: svc, created: t})
		}
	}
	if len(exports) < 2 {
		return nil
	}
	slices.SortFunc(exports, func(a, b export) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.cluster, b.cluster))
	})
	oldest := exports[0]
	var out []model.Diagnostic
	for _, e := range exports[1:] {
		what := conflicts(oldest.svc, e.svc)
		if len(what) == 0 {
			continue
		}
		out = append(out, model.Diagnostic{
			Severity: model.Warning, Kind: "ServiceExport", Namespace: e.svc.Namespace, Name: e.svc.Name, Cluster: e.cluster,
			Message: fmt.Sprintf("conflicts with the export of cluster %s, the oldest (created %s), whose Service the MCS API's conflict resolution takes: %s",
				oldest.cluster, oldest.created.UTC().Format(time.RFC3339), strings.Join(what, "; ")),
		})
	}
	return out
}

// conflicts describes how svc's exported properties conflict with
// those of the winning export's Service: "port http 9081/HTTP (9080/HTTP)",
// "type Headless (ClusterSetIP)".
func conflicts(winner, svc *model.Service) []string {
	var out []string
	if exportType(svc) != exportType(winner) {
		out = append(out, fmt.Sprintf("type %s (%s)", exportType(svc), exportType(winner)))
	}
	for _, p := range svc.Ports {
		w, ok := winner.PortByName(p.Name)
		if ok && (w.Port != p.Port || w.Protocol != p.Protocol) {
			out = append(out, fmt.Sprintf("port %q %d/%s (%d/%s)", p.Name, p.Port, p.Protocol, w.Port, w.Protocol))
		}
	}
	return out
}

// exportType names an exported Service's MCS type: Headless for a
// headless Service, else ClusterSetIP.
func exportType(svc *model.Service) string {
	if svc.Resolution == model.Passthrough {
		return "Headless"
	}
	return "ClusterSetIP"
}
