// Package proxyview answers a control plane's questions about one proxy
// from a meshreg registry: which services it sees, which of a service's
// VIPs it uses, which endpoints it gets (through network gateways across
// networks), which services its own IPs serve, and when to push.
//
// A View follows a registry (an *aggregate.Controller, or any
// registry.Registry) and publishes a Snapshot per generation: immutable,
// consistent, cheap to take, with a channel that closes when a newer one
// is published. A Debouncer turns the generations into one Push per burst
// of changes. A Proxy is plain data (namespace, cluster, network, IPs,
// labels, locality), built by the caller from whatever its proxies send;
// the package knows no xDS type.
//
//	view, err := proxyview.New(agg, proxyview.Options{})
//	deb, err := proxyview.NewDebouncer(view, func(p proxyview.Push) {
//		for _, proxy := range connected {
//			for _, svc := range p.Snapshot.Services(proxy) { ... p.Snapshot.Endpoints(proxy, svc.Key(), port) ... }
//		}
//	}, proxyview.DebounceOptions{})
//	go view.Run(ctx)
//	go deb.Run(ctx)
//
// The answers are Istio's (its push context and EDS builder for a sidecar
// without Sidecar resources), with the differences docs/DIFFERENCES.md lists.
//
// # Visibility
//
// A service's exportTo, or Options.DefaultServiceExportTo when it has
// none, says where it is visible: "*" everywhere (whatever else is
// listed), "~" nowhere, "." its own namespace, a name that namespace.
// When several visible services claim a hostname, the namespace's own
// service wins, then a Kubernetes Service of another namespace, then one
// exported to it by name, then a public one; within each,
// model.ComparePrecedence (a Kubernetes Service, then the oldest), as
// Istio's sidecar scope chooses.
// Snapshot.Services builds a namespace's list once per generation, in
// time proportional to what is visible.
//
// # Endpoints
//
// Snapshot.Endpoints returns a service port's endpoints by locality, with
// these filters: endpoints of a cluster-local host (Options.ServiceSettings,
// by default *.kube-system.svc, kubernetes.default.svc and the control
// plane's host) only from the proxy's cluster; an endpoint
// model.DiscoverableFromSameCluster (Kubernetes Multi-Cluster Services:
// a Service its cluster does not export, or cluster-local mode) only
// from its own cluster, before split horizon, so that no gateway stands
// for it; of a Service with internalTrafficPolicy Local only from the
// proxy's node; Terminating
// never; Unhealthy unless Options.OmitUnhealthyEndpoints; Draining only
// for services labelled PersistentSessionLabel (an endpoint labelled
// DrainingLabel is Draining). Endpoints addressed by DNS name are not
// included: they are not load-assigned; a unix domain socket endpoint is
// (Endpoint.Path). An endpoint's node (internalTrafficPolicy Local) is its
// pod's, or for an endpoint no pod backs its EndpointSlice's nodeName.
//
// When the mesh has network gateways, split horizon applies: an endpoint
// on the proxy's network (or of no network, or for a proxy of none) is
// sent as it is; one on another network is replaced by that network's
// gateways (those of its cluster if any, else of the network; with an
// mTLS port and of the proxy's IP family), one gateway endpoint per
// locality whose weight is the sum of the weights of the endpoints it
// stands for, whatever their health (as in Istio: the gateway's own proxy
// balances by health on its side). Only endpoints that accept Istio mTLS
// cross, since gateways route by SNI. Endpoints of a network without a gateway are
// left out (Options.DirectWithoutGateway keeps them). Weights are
// multiplied by the least common multiple of the gateway counts, so that
// they split evenly.
//
// # Topology
//
// A service with a traffic distribution (model.Service.TrafficDistribution)
// gets Istio's failover priorities: for PreferSameZone, priority 0 for the
// endpoints of the proxy's network, region and zone, then of its region,
// then the others, and those of other networks after; PreferSameNode
// compares region, zone, subzone and node too. Priorities are numbered
// 0, 1, 2... as used. Such services also get their unhealthy endpoints
// whatever Options.OmitUnhealthyEndpoints says: their clients need them
// to know when to spill over. EndpointSlice hints are applied only with
// Options.TopologyHints, as kube-proxy applies them: Istio reads none.
//
// # Concurrency
//
// Every method is safe for concurrent use. Snapshots, and the values
// they hand out, never change; the slices a method documents as shared
// must not be modified.
package proxyview
