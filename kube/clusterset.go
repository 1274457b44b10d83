package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
)

// The ClusterSet host (Options.MCS.Host): a ServiceImport of the cluster
// that gives a service (importInfo.givesService) makes
// name.namespace.svc.clusterset.local a service of the cluster's
// registry, converted with the Service of that name (writeClusterSet
// runs from the Service's flush, and from the flush of a key whose
// Service is gone): a copy of the Service under the ClusterSet hostname
// with the import's IPs (clusterSetService), whose endpoints are the
// Service's with the ClusterSet host's discoverability. They are the
// Service's very endpoints when the two hosts' discoverabilities agree
// (they do unless MCS.ClusterLocal), copies otherwise (index.Recast).

// clusterSetMemo is a service's last ClusterSet conversion: the service
// built from an import and a base, and the recast of its endpoints.
type clusterSetMemo struct {
	imp  *importInfo
	base *model.Service
	svc  *model.Service
	eps  index.Recast
}

// clusterSetOwner is the store's diagnostics owner of an import.
func clusterSetOwner(key types.NamespacedName) string { return "ServiceImport/" + key.String() }

// writeClusterSet writes the ClusterSet service the cluster's import of
// that name gives, with its endpoints, or withdraws it. st is the
// state of the cluster's Service of that name and eps its endpoints, as
// written (sorted); nil when the cluster has none.
func (c *Controller) writeClusterSet(key types.NamespacedName, st *svcState, eps []*model.Endpoint) {
	skey := model.ServiceKey{Namespace: key.Namespace, Hostname: model.ClusterSetHostname(key.Name, key.Namespace)}
	imp := c.cl.imports[key]
	if imp == nil || !c.namespaceSelected(key.Namespace) {
		c.store.DeleteService(skey)
		c.store.SetEndpoints(c.shard, skey, nil)
		c.store.SetDiagnostics(clusterSetOwner(key), nil)
		return
	}
	c.store.SetDiagnostics(clusterSetOwner(key), importDiagnostics(imp, c.opts.ClusterID))
	if !imp.givesService() {
		c.store.DeleteService(skey)
		c.store.SetEndpoints(c.shard, skey, nil)
		return
	}
	if st == nil {
		c.store.UpsertService(clusterSetService(imp, nil, c.opts.ClusterID))
		c.store.SetEndpoints(c.shard, skey, nil)
		return
	}
	base := st.svc
	if st.exported != nil && c.cl.exports[key] != nil {
		base = st.exported
	}
	m := &st.clusterSet
	if m.svc == nil || m.imp != imp || m.base != base {
		m.imp, m.base, m.svc = imp, base, clusterSetService(imp, base, c.opts.ClusterID)
	}
	c.store.UpsertService(m.svc)
	c.store.SetEndpoints(c.shard, skey, m.eps.Apply(eps, c.discoverability(key, true)))
}

// importDiagnostics reports what an import's conversion left out, and an
// import that gives no service yet (a ClusterSetIP import without IPs).
func importDiagnostics(imp *importInfo, cluster model.ClusterID) []model.Diagnostic {
	var out []model.Diagnostic
	report := func(msg string) {
		out = append(out, model.Diagnostic{
			Severity: model.Warning, Kind: "ServiceImport", Namespace: imp.namespace, Name: imp.name,
			Cluster: cluster, Message: msg,
		})
	}
	for _, p := range imp.problems {
		report(p)
	}
	if !imp.givesService() {
		report(fmt.Sprintf("no ClusterSet IP (spec.ips): no %s service until it has one", model.ClusterSetHostname(imp.name, imp.namespace)))
	}
	return out
}

// orphanExportDiagnostics reports a ServiceExport of a Service the
// cluster does not have: it exports nothing (the MCS API's NoService).
func (c *Controller) orphanExportDiagnostics(key types.NamespacedName) []model.Diagnostic {
	if c.cl.exports[key] == nil {
		return nil
	}
	return []model.Diagnostic{{
		Severity: model.Warning, Kind: "ServiceExport", Namespace: key.Namespace, Name: key.Name,
		Cluster: c.opts.ClusterID,
		Message: fmt.Sprintf("service %s not found; nothing exported until it exists", key),
	}}
}
