// Command xds-server serves a meshreg registry to gRPC clients and Envoy
// over xDS (ADS, state of the world and delta), with an HTTP debug server
// beside it. Each node is served its own view of the registry, as
// proxyview computes it for the proxy the node describes. The command is
// flags and wiring around the library: package xds translates and
// serves, package wds serves ztunnel, and wds.Mux puts both on one port.
//
// For each port of each service the node sees and that is load-balanced
// by the client, it serves an API listener "<hostname>:<port>" (what a
// gRPC client dialling "xds:///<hostname>:<port>" asks for), its route
// configuration, an EDS cluster "outbound|<port>||<hostname>" and the
// cluster's load assignment: the node's endpoints, with those of networks
// it does not reach replaced by their network's gateway. UDP ports get
// nothing (sidecars do not proxy UDP). An Envoy node (any node that is
// not a gRPC client: see xds.ClientOf) is also sent the clusters
// of wildcard hosts and unix domain socket endpoints, which a gRPC client
// cannot use. What each sidecar is sent is checked against Istio's own
// xDS server by the EDS scenarios of testdata/eds.
//
// The same ADS port serves Istio's workload discovery (WDS) beside it, as
// istiod does for ambient mode: a ztunnel can connect, and a delta stream
// whose first request is for type.googleapis.com/istio.workload.Address
// is served the workloads and services of the address index over the
// same registry (package wds: wildcard or on demand by "network/IP",
// kept up to date; its other types, such as istio.security.Authorization,
// are answered with no resources). Each cluster's network and the config
// cluster's Namespaces and Gateways (waypoints) come from the same
// sources; workloads carry -trust-domain.
//
// The node is read from its metadata, with the keys of Istio's bootstrap
// (node.metadata): NAMESPACE (which services it sees, by exportTo),
// NETWORK (which endpoints it reaches directly), CLUSTER_ID, INSTANCE_IPS
// (comma-separated), LABELS (a struct of strings), NODE_NAME and
// DNS_CAPTURE ("true" or "false"); its locality from node.locality. A
// gRPC client declares them in its bootstrap:
//
//	"node": {
//	  "id": "client-1",
//	  "metadata": {"NAMESPACE": "shop", "NETWORK": "net-1", "CLUSTER_ID": "east", "INSTANCE_IPS": "10.1.0.5"},
//	  "locality": {"region": "us-east1", "zone": "us-east1-b"}
//	}
//
// Metadata that does not parse (an INSTANCE_IPS entry that is not an IP)
// refuses the node's stream with the reason.
//
// A node's resources are built on its stream's first request, and dropped
// when its last stream closes. Registry changes are debounced as Istio's
// are (100ms of quiet, 10s at most) and each batch is one push: every
// node's resources are rebuilt for the services that changed, or whose
// visibility for it changed (all of them when the network gateways
// changed), and a node is sent only the types, and for delta clients the
// resources, that changed for it.
//
// Usage:
//
//	xds-server [flags]
//
//	-xds-addr ADDR          xDS gRPC listen address (default 127.0.0.1:15010)
//	-debug-addr ADDR        debug HTTP listen address (default 127.0.0.1:15014)
//	-cluster NAME=PATH      manifests (a YAML file or a directory) for a cluster; repeatable
//	-f PATH                 shorthand for -cluster Kubernetes=PATH
//	-kubeconfig [NAME=]PATH watch a live cluster; repeatable
//	-domain-suffix SUFFIX   service hostname suffix (default cluster.local)
//	-trust-domain DOMAIN    SPIFFE trust domain (default cluster.local)
//	-namespace-selector SEL only namespaces whose labels match, e.g. "mesh=on"
//	-mesh-networks FILE     Istio's meshNetworks YAML: endpoint networks, network gateways
//	-mcs-discovery          Multi-Cluster Services: endpoints reach other clusters only
//	                        where a ServiceExport exports their Service (ENABLE_MCS_SERVICE_DISCOVERY)
//	-mcs-host               and each ServiceImport gives name.ns.svc.clusterset.local (ENABLE_MCS_HOST)
//	-mcs-cluster-local      and name.ns.svc.cluster.local reaches its own cluster only (ENABLE_MCS_CLUSTER_LOCAL)
//	-resolve NAME=IP[,IP]   resolve a gateway's host name NAME to these IPs, without DNS; repeatable
//	-v                      log to stderr
//
// Both servers listen on loopback unless told otherwise: neither
// authenticates its clients. The debug server answers /debug/registry/
// (the library's debughttp pages: dump, services, endpoints, workloads,
// diagnostics, gateways, proxy, sync, streams: every EDS and WDS stream with
// what it was last sent and acknowledged; JSON, paged),
// /debug/proxy?node=ID (one connected node's view: its proxy, the
// services it sees with their VIPs and its endpoints of each port, and
// what it was served), /healthz, /readyz (200 once the registry and the
// proxy view have synced) and /metrics (Prometheus: every registry's
// and xDS metrics, as docs/OPERATING.md lists them).
//
// SIGINT or SIGTERM stops everything: the xDS streams end, the servers
// shut down, and the registries stop.
package main
