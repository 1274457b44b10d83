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
//     WorkloadHandler), so Pods of every cluster reach ServiceEntry
//     selectors, and WorkloadEntries reach the Kubernetes Service
//     selectors of their own cluster and the ServiceEntry selectors of
//     every cluster, as in Istio (Options.ShareWorkload decides;
//     ShareAcrossClusters shares entries with every cluster's Services
//     too). A remote cluster's WorkloadEntries come from a serviceentry
//     registry in WorkloadEntriesOnly mode under that cluster's ID, which
//     kube/multicluster adds with the cluster's kube registry.
//
// The merged state depends on the registries' objects only, never on the
// order registries were added or their events arrived.
//
// Registries are added, replaced (for instance after new credentials)
// and removed while the aggregate runs; SubscribeCluster scopes a
// subscription to one cluster's registries.
package aggregate
