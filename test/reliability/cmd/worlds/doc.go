// Command worlds writes the final worlds of generated reliability
// sequences as manifests, for differential testing of meshreg against
// Istio's registry (hack/oracle/differential.sh runs both over them):
// for each seed from -seed to -seed+n-1 it writes DIR/world-<seed>/
// cluster-a.yaml and cluster-b.yaml, "a" being the config cluster. The
// oracle takes no namespace selector, so each world is written with
// World.AllSelected: every namespace that holds objects exists and
// carries the harness's selector label, and no object is dropped. That
// keeps every generated object in play (removing the unselected
// namespaces' objects instead would leave most worlds nearly empty, as
// few sequences create a Namespace at all), the world is one an API
// server could store, and it reads the same with the harness's selector
// as without; what it gives up is the selector's own behaviour, which the
// reliability tests cover against meshreg itself. The sequences are
// generated with Generator.PodNamesPerCluster, so that no two clusters
// hold a pod of the same namespace and name, on which Istio's answer
// depends on event order.
//
// Usage:
//
//	go run ./test/reliability/cmd/worlds -n 1000 -seed 1 -o DIR
package main
