// Package xds serves each node its own view of a meshreg registry, as
// proxyview computes it, to gRPC clients and Envoy through
// go-control-plane.
//
// It has four parts, kept apart so each can be tested alone:
//
//   - Translation (names.go, translate.go, endpoints.go): pure functions
//     to Envoy protos. For each port of a service with client-side load
//     balancing they build an API Listener named "<hostname>:<port>"
//     (what a gRPC client dialling "xds:///<hostname>:<port>" asks for)
//     whose HttpConnectionManager fetches a RouteConfiguration of the same
//     name over ADS, a Cluster "outbound|<port>||<hostname>" of type EDS,
//     and the cluster's ClusterLoadAssignment, from the endpoints
//     proxyview gives one proxy.
//   - ProxyFromNode (node.go): the proxy a node describes, from the node
//     metadata Istio's bootstrap writes.
//   - Nodes (nodes.go, resources.go, snapshot.go): the resources of each
//     connected node, in a go-control-plane SnapshotCache keyed by node
//     ID, updated incrementally on each debounced push.
//   - The Server (server.go): the gRPC server that answers ADS, state of
//     the world and delta, from that cache (other resource types are never
//     answered), and registers each stream's node on its first request.
//
// # Per-node resources
//
// A node is what its metadata says (node.metadata, Istio's keys):
// NAMESPACE decides which services it sees (exportTo), NETWORK which
// endpoints it reaches directly and which through their network's gateway,
// CLUSTER_ID its cluster (cluster-local services, VIPs), INSTANCE_IPS
// (comma-separated) its IP family, LABELS, NODE_NAME (internalTrafficPolicy
// Local) and DNS_CAPTURE ("true"/"false") the rest of proxyview.Proxy;
// node.locality its locality. Metadata that does not parse refuses the
// stream with the reason.
//
// The node is built on the first request of its stream, before that
// request is answered: for every service the proxy sees (one per
// hostname) and each of its ports, the four resources above. Its streams
// are counted; when the last one closes its snapshot is dropped.
//
// On each push (one per debounced batch of registry changes) every node
// is brought to the push's proxyview snapshot, the same for all nodes.
// Per node, only the hostnames whose service the push names, or whose
// service for the node is not the one last translated (its visible list
// changed), are translated again; all of them when the network gateways
// changed. New resources are compared with those served, and a type gets
// a new version only when one of its resources was added, changed or
// removed: a node none of whose resources changed is sent nothing, and a
// delta client is sent only the resources that changed.
//
// # Mapping
//
// A load assignment has one LocalityLbEndpoints per locality, as
// proxyview groups them (sorted by locality), with the group's weight;
// each endpoint has its proxyview weight (at least 1) and its health:
// Healthy is HEALTHY, Unhealthy is UNHEALTHY, Draining is DRAINING
// (proxyview has already left out what must not be sent, Terminating
// endpoints among them). A dual-stack endpoint's further addresses become
// additional_addresses. An endpoint on a network the proxy does not reach
// is replaced by its network's gateway, an endpoint like any other.
//
// Two endpoints with the same address and port (overlapping pod IPs in
// two clusters, or a gateway standing for workloads of two localities)
// would make gRPC reject the whole assignment, so only the first is kept,
// and its locality's weight is that of the endpoints kept.
//
// A node is a gRPC client when its user_agent_name is a gRPC library's
// or its metadata GENERATOR is "grpc" (Istio's gRPC bootstrap), else an
// Envoy sidecar (ClientOf). Envoy is also sent the clusters of wildcard
// hosts ("*.example.com", which it routes to by the host a request
// names; they have no listener or route, since nothing dials them by
// name) and unix domain socket endpoints, as pipe addresses with no
// port; a gRPC client, which dials one hostname over TCP, is sent
// neither.
//
// UDP ports get no resources, since sidecars do not proxy UDP (as in
// Istio's CDS); services resolved by DNS and passthrough or alias
// services get none either: see Translatable and PortServed. A
// locality's subzone of more than one level ("az-1/rack-7") reaches the
// client as its first level, as Istio sends it, while the groups stay
// apart as Istio keeps them.
package xds
