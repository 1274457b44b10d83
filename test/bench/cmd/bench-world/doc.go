// Command bench-world prints a bench preset's Kubernetes objects
// (Namespaces, Nodes, Services, Pods, EndpointSlices) as a YAML stream,
// for a harness in another module (Istio's side of a benchmark) to load
// the very world meshreg's benchmarks build:
//
//	bench-world -preset large > large.yaml
package main
