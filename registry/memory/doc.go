// Package memory is an in-memory registry.Registry for unit tests: the
// fixture to reach for when code under test takes a registry.Registry or
// registry.Discovery.
//
// A Registry holds what the test writes into it (AddService,
// SetEndpoints, AddWorkload, AddDiagnostic, ...) and answers every
// query and subscription exactly as the kube and serviceentry registries
// do, because it is built on the same store: the same sorting, the same
// precedence, the same events in the same order (a service's add before
// its endpoints, an empty endpoints event before a delete, no event for a
// write that changes nothing).
//
// Small builders make the values:
//
//	reg, err := memory.New(memory.Options{ClusterID: "cluster-a"}) // an error only for refused metrics
//	svc := memory.Service("reviews", "default").Port("http", 9080).VIP("10.96.0.10").Build()
//	reg.AddService(svc)
//	reg.SetEndpoints(svc.Key(),
//		memory.Endpoint("10.1.0.1", 9080).Port("http").Pod("default", "reviews-1").Build())
//
// # One shard
//
// A Registry is one shard: one provider (Options.Provider) in one cluster
// (Options.ClusterID). It stores copies of the values it is given, with the
// gaps filled: a service's Provider becomes the registry's, and VIPs,
// endpoints and workloads with no cluster get the registry's cluster. The
// builders leave the cluster empty unless told, so values built once fit
// any registry.
//
// # Workloads and endpoints
//
// Workloads (AddWorkload) and endpoints (SetEndpoints) are independent
// writes: the registry does not derive one from the other, as the kube
// registry derives both from a pod. An endpoint names its workload
// (EndpointBuilder.Pod, WorkloadEntry) and serves one service port;
// a workload is the Pod or WorkloadEntry itself, listed by Workloads and
// WorkloadsByIP, with its own labels, addresses and health. Consumers
// read each where they need it: proxyview sends endpoints, with their
// Health; the address index (ambient mode, WDS) sends workloads, and
// takes a pod's status from the workload's health
// (WorkloadBuilder.Health), never from its endpoints. To change both, as
// a pod that stops being ready changes both in the kube registry, write
// both.
//
// # Running
//
// Queries, writes and subscriptions work without Run. Run matters only to
// code that waits for HasSynced: as with a real registry, HasSynced turns
// true once Run has started and the state written before it has reached
// every subscribed handler. So a test can write the initial state, start
// the code under test, then call Run, and see that code wait for the sync.
package memory
