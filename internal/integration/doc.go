// Package integration holds the integration tier: the kube and
// serviceentry controllers, and the aggregate over them, against a real
// kube-apiserver and etcd, with EndpointSlices written by Kubernetes' own
// EndpointSlice controller (kube-controller-manager). A test that needs a
// remote cluster starts a second kube-apiserver and etcd of its own, with
// Istio's CRDs (TestRemoteClusterWorkloadEntries: a remote cluster added
// from a Secret, whose WorkloadEntries are read through its kubeconfig).
//
// The tests are behind the build tag "integration" and need the servers
// built by hack/k8s/build.sh; the directory it prints goes in
// MESHREG_K8S_DIR. `make test` does both. Without the tag, or without the
// binaries, the tier is skipped with a message saying how to run it.
//
// Example, in the same tier, runs a kube controller against the
// apiserver the way a control plane does, and prints the endpoints
// Kubernetes' EndpointSlice controller made for a Service's pods.
package integration
