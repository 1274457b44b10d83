// Package integration holds the integration tier: the kube and
// serviceentry controllers, and the aggregate over them, against a real
// kube-apiserver and etcd, with EndpointSlices written by Kubernetes' own
// EndpointSlice controller (kube-controller-manager). A test that needs a
// remote cluster starts a second kube-apiserver and etcd of its own, with
// Istio's CRDs (TestRemoteClusterWorkloadEntries: a remote cluster added
// from a Secret, whose WorkloadEntries are read through its kubeconfig).
//
// TestFaults holds the registry to "nothing lost, nothing stale" under
// the faults of real processes. It starts two clusters of its own (etcd,
// kube-apiserver, and kube-controller-manager with the EndpointSlice,
// Deployment and ReplicaSet controllers each), reaches them only through
// TCP fault proxies, the remote one through a kubeconfig Secret in the
// config cluster, and churns a workload on both (Deployments whose pods
// the test binds and runs, Services, a manual EndpointSlice, a
// ServiceEntry and WorkloadEntries). It then injects, one after another:
// the config cluster's API server killed and restarted; etcd compacted
// past the watchers' resource version (the remote server serves watches
// from etcd, so they are answered 410); every connection stalled for
// longer than client-go's HTTP/2 health check; a slow network; the remote
// server down for a minute while its Secret's credentials are rotated
// (the old ones refused from its restart); and its Secret deleted and
// added back while it is down. A subscriber blocked for seconds at each
// fault keeps a mirror of the events. After each fault the registry must
// converge, within a deadline, to the dump of a fresh registry over the
// final objects, agree with the pods on the servers, and the mirror with
// the registry; the test logs how long that took. The heap after the
// faults must stay within a bound of the heap before them, and TestMain
// checks for leaked goroutines. MESHREG_SOAK=30m runs random faults for
// that long and prints a summary line.
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
