// Package multicluster grows a registry past one cluster: it watches
// Kubernetes Secrets that carry kubeconfigs for remote clusters and adds,
// replaces and removes a registry per cluster in a target such as the
// aggregate.
//
// A cluster Secret has the label istio/multiCluster=true and one data key
// per cluster: the key is the cluster ID, the value a kubeconfig for it,
// the same convention as Istio's remote secrets. When a kubeconfig
// changes, the cluster's registry is replaced (the aggregate keeps the old
// one serving until the new one has synced); when a key or the Secret
// goes, the cluster's registry is removed.
//
// A cluster has two registries, as in istiod
// (pilot/pkg/serviceregistry/kube/controller/multicluster.go): its
// Kubernetes registry (Options.Factory) and, built from the same
// kubeconfig, the registry of its WorkloadEntries (Options.WorkloadEntries,
// by default WorkloadEntryFactory: a serviceentry controller in
// WorkloadEntriesOnly mode under the cluster's ID, over an Istio client of
// the same kubeconfig). The aggregate hands those WorkloadEntries to the
// Services of their own cluster and to the config cluster's
// ServiceEntries, and their endpoints keep the cluster. The second
// registry is added after the first, replaced with it and removed with
// it, so that a removed cluster leaves nothing behind; Istio reads remote
// WorkloadEntries by default (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY),
// and Options.SkipWorkloadEntries turns that off. A cluster without
// Istio's CRDs gives an empty WorkloadEntry registry, which reads the
// entries once the CRD is installed.
//
// A cluster added by code rather than by a Secret gets the same by adding
// both registries to the aggregate itself: its kube controller, and
// serviceentry.New over serviceentry.NewInformerSource (with
// InformerOptions.WorkloadEntriesOnly) with Options{ClusterID: id,
// WorkloadEntriesOnly: true}; the aggregate package's
// Example (remoteWorkloadEntries) shows it.
//
// Problems (an unreadable kubeconfig, a registry that cannot be built, a
// cluster ID claimed by two Secrets) are reported as diagnostics naming
// the Secret; they never stop the other clusters, and a WorkloadEntry
// registry that cannot be built or added never stops its cluster's
// Kubernetes registry.
package multicluster
