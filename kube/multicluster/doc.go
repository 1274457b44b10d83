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
// Problems (an unreadable kubeconfig, a registry that cannot be built, a
// cluster ID claimed by two Secrets) are reported as diagnostics naming
// the Secret; they never stop the other clusters.
package multicluster
