// Command xds-server serves a meshreg registry to gRPC clients and Envoy
// over xDS (ADS, state of the world and delta), with an HTTP debug server
// beside it.
//
// For each port of each service load-balanced by the client it serves an
// API listener "<hostname>:<port>" (what a gRPC client dialling
// "xds:///<hostname>:<port>" asks for), its route configuration, an EDS
// cluster "outbound|<port>||<hostname>" and the cluster's load assignment.
// Resources follow the registry's events one service at a time.
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
//	-v                      log to stderr
//
// Both servers listen on loopback unless told otherwise: neither
// authenticates its clients. The debug server answers /debug/services,
// /debug/endpoints, /debug/workloads, /debug/diagnostics (JSON), /healthz,
// /readyz (200 once the registry has synced) and /metrics (Prometheus).
//
// SIGINT or SIGTERM stops everything: the xDS streams end, the servers
// shut down, and the registries stop.
package main
