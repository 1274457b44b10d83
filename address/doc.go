// Package address is the index Istio's ambient mode serves to every
// node's ztunnel: the mesh's workloads and services, keyed by address,
// as Istio computes it (pilot/pkg/serviceregistry/ambient), over any
// meshreg registry, usually the aggregate.
//
//	idx, err := address.New(agg, address.Options{ConfigCluster: "east"})
//	go idx.Run(ctx)
//	snap := idx.Snapshot()
//	snap.Lookup("net1/10.1.0.5") // the workloads and services at that address
//
// An Index follows the registry's events and publishes a Snapshot per
// generation: immutable, safe to share, holding istio.workload.Address
// messages (package workloadapi, wire-compatible with ztunnel) by key,
// a workload by its uid, a service by "namespace/hostname", and by
// "network/IP". Subscribe tells what each generation changed, resource
// by resource; package wds serves the snapshots to ztunnel over delta
// xDS. The index costs nothing until it runs: it is a subscriber of the
// registry like any other.
//
// Beside services and workloads it reads the cluster metadata the
// registry publishes (registry.MetadataHandler): each cluster's network,
// its Namespaces and its Gateway API Gateways, which the kube registries
// (with a Gateway API client) and the aggregate publish and
// registry/memory holds for tests. It watches nothing of its own.
//
// # Clusters and networks
//
// Without Options.MultiNetwork (Istio's AMBIENT_ENABLE_MULTI_NETWORK off,
// its default) the index holds the config cluster alone: its workloads,
// its Services with their VIPs there, the ServiceEntries, and the
// network gateways of its istio-remote Gateways. With it, every cluster,
// as Istio's multicluster ambient mode: a workload on the config
// cluster's network is sent as itself; the workloads on another network
// are folded, per network and global service, into one split-horizon
// workload that stands for them behind that network's east-west gateway
// (capacity the sum of theirs), and their identities join the service's
// subject alternative names. Another cluster's Service is sent only when
// global there (Options.ServiceScopes, the mesh config's
// serviceScopeConfigs), its VIPs merged with the config cluster's.
//
// # Workloads
//
//   - Pods that are not Succeeded or Failed and have an IP (the kube
//     registry lists them, Unhealthy when not Ready or being deleted):
//     uid "<cluster>//Pod/<namespace>/<name>".
//   - WorkloadEntries: "<cluster>/networking.istio.io/WorkloadEntry/<ns>/<name>";
//     one addressed by a host name has that hostname and no address.
//   - A ServiceEntry's own endpoints, one per address, serving every host
//     of the entry; a DNS entry with neither endpoints nor a selector has
//     one per host, addressed by the host name:
//     "<cluster>/networking.istio.io/ServiceEntry/<ns>/<name>/<address>".
//   - EndpointSlice endpoints that name no Pod:
//     "<cluster>/discovery.k8s.io/EndpointSlice/<ns>/<slice>/<IP>".
//   - Network gateways declared by Gateway API Gateways (the config
//     cluster's of class istio-remote, another cluster's of class
//     istio-east-west): "NetworkGateway/<network>/<address>/<HBONE port>".
//   - With MultiNetwork, split-horizon workloads:
//     "<network>/SplitHorizonWorkload/<gateway ns>/<gateway>/<address>/<service>".
//
// A workload carries what ztunnel reads: addresses, network and its
// gateway, cluster, service account and trust domain (named only when
// not cluster.local), node, locality, status, the services it backs with
// the port it listens on for each (a named targetPort resolved against
// its container ports), the HBONE tunnel when Istio's CNI redirects it
// (ambient.istio.io/redirection: enabled) or it declares the tunnel, its
// waypoint, workload name and canonical name and revision, capacity (a
// WorkloadEntry's or endpoint's weight) and host network mode.
//
// # Services
//
// Kubernetes Services (not ExternalName) and every host of every
// ServiceEntry: VIPs on their cluster's network (a ServiceEntry's
// addresses with their prefix length, else its auto-allocated ones, on
// the config cluster's), ports with their target ports and application
// protocols, subject alternative names, the waypoint and canary
// waypoints, load balancing (internalTrafficPolicy Local, traffic
// distribution, passthrough for resolution NONE, publishNotReadyAddresses),
// IP families and a ServiceEntry's visibility (model.Service.Visibility:
// Namespace is sent as such, None not at all). Of the services that share
// a hostname across namespaces, the one model.ComparePrecedence puts
// first among those other namespaces may see is canonical.
//
// # Waypoints
//
// A workload, service or ServiceEntry uses the waypoint its
// istio.io/use-waypoint label names (in the namespace its
// istio.io/use-waypoint-namespace label names, else its own), else its
// namespace's; "none" opts out. A waypoint is a Gateway API Gateway with
// an address in its status; its istio.io/waypoint-for label (or its
// GatewayClass's) says whether it takes service traffic (the default),
// workload traffic, or both, and its HBONE listener's allowedRoutes which
// namespaces may use it. A service that names a canary
// (istio.io/use-waypoint-canary at the level its waypoint comes from)
// is sent both, weighted by istio.io/use-waypoint-canary-weight. Pods of
// the waypoint itself use none, and get its inbound binding
// (ambient.istio.io/waypoint-inbound-binding) as their application
// tunnel; the Services Istio manages for waypoints and east-west
// gateways use none. istio.io/ingress-use-waypoint on a service or its
// namespace is read too. A workload's waypoint is resolved in its own
// cluster's namespaces and Gateways, a service's in the config
// cluster's. What cannot be resolved is a diagnostic
// (Snapshot.Diagnostics) naming the object, and the object is indexed
// without a waypoint.
//
// # Out of scope
//
// Authorization policies (Istio security configuration, not registry
// data) are not computed: workloads carry none. docs/DIFFERENCES.md
// lists where the index differs from Istio's.
package address
