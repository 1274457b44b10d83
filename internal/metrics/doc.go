// Package metrics holds the Prometheus metrics of one registry: what its
// store publishes and holds, its subscribers' queues, and, for a kube
// controller, the lag of changes and the informers' relists. A nil
// *Registry is off: every method does nothing, so that a registry built
// without a prometheus.Registerer pays for nothing but a nil check.
//
// Every metric carries the labels registry (the provider, or
// "aggregate") and cluster. The state gauges (services, endpoints,
// workloads, gateways, diagnostics, pending endpoints, queue depths) are
// read from the registry when scraped, not kept up to date on each
// change.
package metrics
