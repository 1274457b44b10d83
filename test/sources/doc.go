// Package sources turns the source flags shared by the examples
// (manifests per cluster, kubeconfigs of live clusters) into an aggregate
// registry: a kube controller per cluster, a serviceentry controller over
// the config cluster's ServiceEntries and WorkloadEntries, and one over
// each other cluster's WorkloadEntries alone, as istiod reads them. The golden
// scenario tests build their registries the same way, so that what the
// examples print and what the tests check cannot drift apart.
package sources
