// Package meshreg gives a service-mesh control plane one queryable
// registry of the services, endpoints and workloads of its Kubernetes
// clusters and its Istio configuration (ServiceEntries and
// WorkloadEntries): the part of Istio's pilot/pkg/serviceregistry that a
// control plane of your own, an xDS server, or a test needs, with no
// globals, subscriptions that end, and queries that agree with each other.
//
// This package holds no code; the library is in its sub-packages.
//
// # Data flow
//
// Each source is turned into model values by its own registry; the
// aggregate merges the registries; consumers query it and subscribe to it.
//
//	Kubernetes API (per cluster)            Istio config (API, files or code)
//	Services  EndpointSlices  Pods  Nodes   ServiceEntry        WorkloadEntry
//	    \          |          /     /            |                   |
//	     +---- kube.Controller ----+         serviceentry.Controller
//	     |  Services, instances    |<--WEs--|  Services, instances  |
//	     |  WorkloadInstances(Pod) |--Pods->|  WorkloadInstances(WE)|
//	     +-----------+-------------+        +-----------+-----------+
//	                 \                                  /
//	                  +------ aggregate.Controller ----+
//	                  | merged Services (per cluster VIPs), endpoints by
//	                  | shard (provider, cluster), workloads by IP, events
//	                  +--------------------+-----------+
//	                                       |
//	            queries (Services, GetService, Endpoints, Workloads, Proxy targets)
//	            subscriptions (service, endpoints, workload, gateway events)
//	                                       |
//	    +----------- proxyview.View ------------+  +------ address.Index ------+
//	    | per proxy: visible services, its VIPs, |  | ambient: workloads and    |
//	    | endpoints through network gateways,    |  | services by uid, IP and   |
//	    | inbound; snapshots, debounced pushes   |  | host; wds serves ztunnel  |
//	    +--------------------+------------------+  +-------------+-------------+
//	                          \                                  /
//	             your control plane / examples/xds-server / tests
//
// A kube.Controller watches one cluster; a serviceentry.Controller reads
// ServiceEntries and WorkloadEntries from a cluster, from files or from
// code, or, as Istio reads WorkloadEntries from every cluster, a remote
// cluster's WorkloadEntries alone (kube/multicluster adds one per cluster
// of its Secrets). Pods cross to the serviceentry side so that
// ServiceEntry workloadSelectors select them, and WorkloadEntries cross to
// the kube side of their own cluster so that Service selectors select
// them, and to the ServiceEntries. The aggregate.Controller holds
// registries that are added and removed at run time and answers for all of
// them: one Service per hostname with each cluster's VIPs, and endpoints
// kept per shard (provider, cluster). With Kubernetes Multi-Cluster
// Services (kube.MCSOptions, Istio's ENABLE_MCS_* switches, off by
// default), ServiceExports decide which endpoints other clusters' proxies
// may be sent (model.Endpoint.Discoverability), and ServiceImports give
// name.namespace.svc.clusterset.local services.
//
// # Packages
//
//   - model: the plain, immutable data: Service, Port, Endpoint,
//     WorkloadInstance, ServiceTarget, Diagnostic, and their enumerations.
//   - registry: the contracts every registry meets (Reader, Discovery,
//     Controller, Registry, and the optional roles), the events and Handler, the Notifier that delivers them
//     (one ordered queue per subscriber), and the dump of any registry in
//     the format of the dump-format document.
//   - registry/memory: an in-memory Registry with builders, for unit tests
//     of code that consumes a registry.
//   - kube, serviceentry, aggregate: the Kubernetes registry, the Istio
//     configuration registry, and the aggregate of many.
//   - proxyview: one proxy's view of a registry, as Istio's push context
//     computes it: the services its namespace may see, the VIPs it uses,
//     its endpoints (through network gateways across networks), the
//     service ports it serves; immutable snapshots per generation and a
//     debouncer that batches changes into pushes.
//   - address: Istio ambient mode's index of workloads and services by
//     address, as ztunnel reads it (address/workloadapi holds the wire
//     messages); wds serves it over delta xDS.
//   - debughttp: a read-only HTTP handler that shows a registry and a
//     proxy's view, paged and bounded, to mount on your own mux.
//   - fixture: the kube and serviceentry controllers under an aggregate on
//     fake clientsets, followed to a settled state, for unit tests of code
//     that runs them; kube/crinformers: the kube controller on a
//     controller-runtime manager's informers.
//
// # Contracts in brief
//
// Queries are consistent: GetService, Endpoints and ProxyTargets agree with
// Services; when a Kubernetes Service and a ServiceEntry claim one
// hostname, the Kubernetes Service wins everywhere. Subscribing returns an
// unsubscribe function; a new subscriber first receives the current state,
// then every change, in order, never concurrently, and never an update that
// changes nothing. Endpoint events carry the full list of one service from
// one shard. HasSynced means the initial state reached every handler, and
// a SyncedEvent tells each handler when it has (registry.WaitSynced). The
// state never depends on the order in which events arrived, and what a
// registry refuses is reported as a diagnostic rather than dropped.
package meshreg
