// Package debug is the xds-server's HTTP debug server: the registry's
// state and each connected node's view as JSON, health and readiness
// probes, and Prometheus metrics.
//
// The server is meant for loopback: it has no authentication, and the
// registry's state (addresses, identities, labels) is not for everyone.
//
// Endpoints:
//
//	/debug/registry/...   the library's debughttp pages: dump, services, endpoints,
//	                      workloads, diagnostics, gateways, proxy (paged, bounded)
//	/debug/proxy?node=ID  one connected xDS node's view (ProxyPage)
//	/healthz              200 while the process serves
//	/readyz               200 once the registry and the proxy view have synced, 503 before
//	/metrics              Prometheus text, from a registry of the server's own
//
// /debug/proxy shows a node as it was last served: the proxy its metadata
// describes, each service it sees (one per hostname) with the VIPs it uses
// for it and its endpoints of each port (address, port, weight, health,
// and the gateway when one stands for a network the proxy does not
// reach), and per xDS type the version, resources and responses sent. It
// answers 400 without node, 404 for a node that is not connected.
package debug
