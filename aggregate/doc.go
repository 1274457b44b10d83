// Package aggregate merges many registries, of both providers and any
// number of clusters, into one registry that answers queries and tells
// subscribers what changed.
//
// A Controller holds registries keyed by provider and cluster. It
// subscribes to each, folds their events into one merged state, and
// publishes the merged state's events to its own subscribers:
//
//   - services with the same namespace and hostname are one service. A
//     Kubernetes Service takes precedence over ServiceEntries for its key,
//     in every query and event alike, and the entries it shadows are
//     reported as diagnostics and contribute no endpoints. The same
//     Kubernetes Service in several clusters is one service carrying each
//     cluster's VIPs; its attributes come from the first cluster by ID, and
//     clusters that disagree on ports, resolution, exportTo, external
//     name or mesh-external are reported;
//   - when several namespaces declare one hostname, GetService answers with
//     the Kubernetes Service, else the oldest ServiceEntry, else by
//     namespace and name;
//   - endpoints stay per shard (provider, cluster): each EndpointsEvent
//     carries one shard's complete list for one service;
//   - workloads are kept by cluster, kind, namespace and name, and handed
//     to the registries that select other registries' workloads (see
//     registry.WorkloadHandler), so Pods of every cluster reach ServiceEntry
//     selectors, and WorkloadEntries reach the Kubernetes Service
//     selectors of their own cluster and the ServiceEntry selectors of
//     every cluster, as in Istio (Options.ShareWorkload decides;
//     ShareAcrossClusters shares entries with every cluster's Services
//     too). A remote cluster's WorkloadEntries come from a serviceentry
//     registry in WorkloadEntriesOnly mode under that cluster's ID, which
//     kube/multicluster adds with the cluster's kube registry.
//
// With Kubernetes Multi-Cluster Services (kube.MCSOptions), the clusters'
// ServiceExports and ServiceImports meet here, as in Istio:
//
//   - the ClusterSet host name.namespace.svc.clusterset.local that the
//     importing clusters contribute is the merged Service of that name
//     under the ClusterSet hostname, with every importing cluster's
//     ClusterSet IPs as its VIPs there (Passthrough when the imports are
//     headless); none while no cluster has the Service, and each import
//     says so. It beats a ServiceEntry of its name;
//   - its endpoints are every cluster's endpoints of the Service: an
//     importing cluster's as its registry gives them (always
//     discoverable while it exports the Service), and those of a cluster
//     that does not import it discoverable from that cluster alone
//     (Istio's rule: a cluster's own import governs whether its
//     endpoints reach other clusters under the ClusterSet host);
//   - the merged Service carries every cluster's export
//     (model.Service.Exports), and the exports that conflict with the
//     oldest one (a port of one name with another number or protocol,
//     or another type, headless or not) are reported, by the MCS API's
//     conflict resolution; nothing is written to the API.
//
// The merged state depends on the registries' objects only, never on the
// order registries were added or their events arrived.
//
// Registries are added, replaced (for instance after new credentials)
// and removed while the aggregate runs; SubscribeCluster scopes a
// subscription to one cluster's registries.
package aggregate
