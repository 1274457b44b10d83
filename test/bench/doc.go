// Package bench measures meshreg against the floor: a bare client-go
// SharedInformerFactory over the same fake clientset, with Services,
// EndpointSlices and Pods informers and no-op handlers.
//
// Generate builds a deterministic cluster (namespaces, nodes with zones,
// Services with two ports, Pods, EndpointSlices of at most 100 endpoints,
// ServiceEntries with workload selectors) from a Config, usually one of
// the Presets. Run preloads it into the object tracker of a
// fake.NewSimpleClientset (the field-managed fake.NewClientset rebuilds a
// REST mapper on every write, which would swamp the figures) and, for each
// system (the floor, kube.Controller, and aggregate.Controller over a
// kube.Controller), measures initial sync time, heap attributable after
// GC, CPU and latency per change under a fixed churn stream (written
// through the clientset, then delivered to the system's watches with no
// write, which leaves the system's own cost of a change), and query
// costs. Report writes the results as JSON and Markdown; PlotSVG draws
// sync time and heap against endpoint count.
//
// The command test/bench/cmd/meshreg-bench runs it.
package bench
