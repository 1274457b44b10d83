// Package debughttp is a read-only HTTP handler that shows a registry:
// mount it on your own mux, under any prefix, and it answers in JSON
// what the registry holds now.
//
//	mux.Handle("/debug/registry/", http.StripPrefix("/debug/registry", debughttp.New(agg, debughttp.Options{View: view, XDS: proxies, WDS: workloads})))
//
// Paths (GET only):
//
//	/                 the paths below
//	/dump             the whole dump (DUMP-FORMAT.md), refused with 413 above Options.MaxDumpEndpoints
//	/services         services, each with its number of endpoints; ?namespace= narrows
//	/endpoints        one service's endpoints, by cluster: ?service=NAMESPACE/HOSTNAME[&port=NAME][&cluster=ID]
//	/workloads        workloads; ?ip= those at one address
//	/diagnostics      diagnostics; ?severity=Error|Warning narrows
//	/gateways         network gateways (a registry that knows them)
//	/proxy            one proxy's view (with Options.View): ?namespace=&cluster=&network=&ip=A,B&region=&zone=&subzone=&node=
//	                  its visible services with their VIPs; &service=NAMESPACE/HOSTNAME that service's endpoints for it
//	/sync             whether the registry has synced and, until it has, what it waits for: registries,
//	                  and their informers that have not listed, by kind and cluster (registry.SyncReporter)
//	/streams          the open streams of the xDS and WDS servers (with Options.XDS, Options.WDS): per stream
//	                  its node, client kind and variant, and per type what it subscribes to, the last response
//	                  sent and acknowledged, the last rejection and when the oldest change owed reached the view
//
// Lists are paged: ?limit= (default Options.PageSize, at most
// Options.MaxPageSize) and ?offset=; a page says the total and the next
// offset. Offsets index the registry's state at each request, so a page
// taken after a change may shift. A bad parameter is a 400 whose body
// says which and why.
//
// The handler has no listener of its own, holds no state between
// requests, and is safe for concurrent use. It reads the registry
// through its queries only.
package debughttp
