package kube

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/meshreg/meshreg/model"
)

// Kubernetes Multi-Cluster Services, as Istio reads them
// (pilot/pkg/serviceregistry/kube/controller/serviceexportcache.go and
// serviceimportcache.go): a ServiceExport counts by its name alone, a
// ServiceImport by its IPs (spec.ips, the valid ones, in text order) and
// its type. The conversions below are pure; the informers keep their
// results (exportInfo, importInfo) instead of the objects.

// exportInfo is what the controller keeps of a ServiceExport: its key
// and creation time (the MCS API's conflict resolution ranks exports by
// age).
type exportInfo struct {
	objectMeta
	created time.Time
}

// importInfo is what the controller keeps of a ServiceImport.
type importInfo struct {
	objectMeta
	created time.Time
	// vips are the ClusterSet IPs, as single-address prefixes, in the
	// order of their text (as Istio sorts them).
	vips []netip.Prefix
	// headless is spec.type Headless.
	headless bool
	// ports are spec.ports, for a ClusterSet service this cluster has no
	// Service of its own for.
	ports []model.Port
	// problems are what the conversion left out, for diagnostics.
	problems []string
}

// givesService reports whether the import gives a ClusterSet service in
// its cluster: it has ClusterSet IPs (Istio's rule), or is headless (a
// Passthrough service: Istio gives none, see docs/DIFFERENCES.md).
func (i *importInfo) givesService() bool { return len(i.vips) > 0 || i.headless }

// convertServiceExport returns what the controller keeps of a
// ServiceExport.
func convertServiceExport(se *mcsv1alpha1.ServiceExport) *exportInfo {
	return &exportInfo{
		objectMeta: objectMeta{namespace: se.Namespace, name: se.Name, resourceVersion: se.ResourceVersion},
		created:    se.CreationTimestamp.Time,
	}
}

// convertServiceImport returns what the controller keeps of a
// ServiceImport. IPs that are not IP addresses (or carry an IPv6 zone,
// which a VIP cannot hold) are left out, as are ports out of range or
// named twice; each is a problem.
func convertServiceImport(si *mcsv1alpha1.ServiceImport) *importInfo {
	out := &importInfo{
		objectMeta: objectMeta{namespace: si.Namespace, name: si.Name, resourceVersion: si.ResourceVersion},
		created:    si.CreationTimestamp.Time,
		headless:   si.Spec.Type == mcsv1alpha1.Headless,
	}
	ips := slices.Sorted(slices.Values(si.Spec.IPs))
	for _, s := range slices.Compact(ips) {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			out.problems = append(out.problems, fmt.Sprintf("spec.ips: %q is not an IP address; ignored", s))
			continue
		}
		out.vips = append(out.vips, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	for i, p := range si.Spec.Ports {
		switch {
		case p.Port < 1 || p.Port > 65535:
			out.problems = append(out.problems, fmt.Sprintf("spec.ports[%d]: port %d out of range 1-65535; ignored", i, p.Port))
			continue
		case slices.ContainsFunc(out.ports, func(q model.Port) bool { return q.Name == p.Name }):
			out.problems = append(out.problems, fmt.Sprintf("spec.ports[%d]: name %q used twice; ignored", i, p.Name))
			continue
		}
		app := ""
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		out.ports = append(out.ports, model.Port{
			Name: p.Name, Port: uint32(p.Port),
			Protocol: model.DetectProtocol(uint32(p.Port), p.Name, app, p.Protocol == corev1.ProtocolUDP),
		})
	}
	return out
}

// clusterSetService returns the ClusterSet service
// (name.namespace.svc.clusterset.local) an import gives in a cluster, as
// Istio builds it: a copy of base, the Service of that name (the
// cluster's own, converted; nil when the cluster has none), under the
// ClusterSet hostname, with the import's IPs as its VIPs in the cluster
// and no external addresses. Without a base it has the import's ports
// and creation time. A headless import without IPs is Passthrough; one
// with IPs has base's resolution (Istio's, for a headless Service
// imported with IPs). The import must give a service (givesService).
func clusterSetService(imp *importInfo, base *model.Service, cluster model.ClusterID) *model.Service {
	var out *model.Service
	if base != nil {
		out = base.DeepCopy()
	} else {
		out = &model.Service{
			Namespace: imp.namespace, Name: imp.name, Provider: model.Kubernetes, Clusters: []model.ClusterID{cluster},
			Resolution: model.ClientSideLB, Ports: slices.Clone(imp.ports), CreationTime: imp.created,
		}
	}
	out.Hostname = model.ClusterSetHostname(imp.name, imp.namespace)
	out.Addresses, out.ExternalAddresses = nil, nil
	if len(imp.vips) > 0 {
		out.Addresses = map[model.ClusterID][]netip.Prefix{cluster: slices.Clone(imp.vips)}
	} else {
		out.Resolution = model.Passthrough
	}
	return out
}

// exportedService returns svc with the cluster's export (model.Service's
// Exports) recorded: svc itself when it has exactly that already, else
// a copy.
func exportedService(svc *model.Service, cluster model.ClusterID, created time.Time) *model.Service {
	want := map[model.ClusterID]time.Time{cluster: created}
	if maps.EqualFunc(svc.Exports, want, time.Time.Equal) {
		return svc
	}
	out := *svc // the conversion's maps and slices are shared, never written
	out.Exports = want
	return &out
}

// endpointDiscoverability decides the discoverability of a Service's
// endpoints in a cluster under one of its hosts, as Istio's
// serviceExportCache does: with service discovery off, always; in
// cluster-local mode, the cluster.local host's only in the cluster; else
// discoverable from other clusters only while the cluster exports the
// Service. (The clusterset.local host's endpoints of a cluster that does
// not import the Service come from the aggregate, see aggregate.)
func endpointDiscoverability(o MCSOptions, clusterSet, exported bool) model.Discoverability {
	switch {
	case !o.ServiceDiscovery:
		return model.AlwaysDiscoverable
	case o.ClusterLocal && !clusterSet:
		return model.DiscoverableFromSameCluster
	case exported:
		return model.AlwaysDiscoverable
	}
	return model.DiscoverableFromSameCluster
}
