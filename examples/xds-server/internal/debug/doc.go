// Package debug is the xds-server's HTTP debug server: the registry's
// state as JSON, health and readiness probes, and Prometheus metrics.
//
// The server is meant for loopback: it has no authentication, and the
// registry's state (addresses, identities, labels) is not for everyone.
//
// Endpoints:
//
//	/debug/services     services, in the registry dump format, without endpoints
//	/debug/endpoints    each service's endpoints, in the dump format
//	/debug/workloads    workload instances, in the dump format
//	/debug/diagnostics  what the registry refused or could not use yet
//	/healthz            200 while the process serves
//	/readyz             200 once the registry has synced, 503 before
//	/metrics            Prometheus text, from a registry of the server's own
package debug
