// Package xds serves each proxy its own view of a meshreg registry, as
// package proxyview computes it, over the Aggregated Discovery Service:
// the EDS an Envoy sidecar asks for, and the LDS, RDS, CDS and EDS a
// proxyless gRPC client (an "xds:///" target) needs, with
// go-control-plane's types.
//
// # Contract
//
// A Server serves one *proxyview.View. New makes it, Register mounts it
// on a gRPC server, and Run pushes the view's changes, debounced
// (Options.Debounce), until its context is done; then every stream
// ends. To serve ztunnel's WDS on the same port, register a wds.Mux
// holding both instead:
//
//	proxies, _ := xds.New(view, xds.Options{Metrics: prom})
//	workloads, _ := wds.New(index, wds.Options{})
//	wds.Mux{WDS: workloads, Other: proxies}.Register(grpcServer)
//
// State-of-the-world and delta streams are both served, from
// go-control-plane's stream handlers over a cache of each node's
// resources; other resource types are never answered. A node is sent
// only what changed for it: a push translates again, for each node, the
// services it names and those whose visibility for the node changed,
// and a type gets a new version only when one of its resources did; a
// delta client is sent only the resources that changed.
//
// The translation is importable on its own, as pure functions:
// ClusterName, ListenerName and RouteName; Listener, RouteConfiguration,
// Cluster and LoadAssignment; ProxyFromNode and ClientOf for what a node
// is.
//
// # Metrics
//
// With Options.Metrics set, the server registers its own series and
// those it shares with package wds's server (a wds.Server given the same
// Registerer feeds them too, with client "ztunnel"; docs/OPERATING.md
// says what each means):
//
//	meshreg_xds_streams{client}                   open streams whose node registered (envoy, grpc)
//	meshreg_xds_pending{client}                   types per node with a subscribed change not yet sent
//	meshreg_xds_responses_total{type}             responses sent
//	meshreg_xds_resources_sent_total{type}        resources in them
//	meshreg_xds_nacks_total{type}                 requests rejecting what they were sent
//	meshreg_xds_change_to_response_seconds{type}  from a change reaching the view to the response carrying it
//	meshreg_xds_nodes                             connected nodes
//	meshreg_xds_resources{type}                   resources served, summed over nodes
//	meshreg_xds_pushes_total                      pushes (debounced batches)
//	meshreg_xds_push_changes_total                view generations the pushes held
//	meshreg_xds_push_duration_seconds             time a push took over every node
//
// A change is owed to a node when a resource one of its streams
// subscribes to (by name, or as a wildcard) changed; it is paid, and its
// delay observed, by the node's next response of that type.
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
// hostname) and each of its ports, an API Listener named
// "<hostname>:<port>" (what a gRPC client dialling
// "xds:///<hostname>:<port>" asks for) whose HttpConnectionManager
// fetches a RouteConfiguration of the same name over ADS, a Cluster
// "outbound|<port>||<hostname>" of type EDS, and its
// ClusterLoadAssignment. Its streams are counted; when the last one
// closes its resources are dropped.
//
// On each push every node is brought to the push's proxyview snapshot,
// the same for all nodes. Per node, only the hostnames whose service the
// push names, or whose service for the node is not the one last
// translated (its visible list changed), are translated again; all of
// them when the network gateways changed. New resources are compared
// with those served: a node none of whose resources changed is sent
// nothing.
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
