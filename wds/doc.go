// Package wds serves an address index (package address) to ztunnel over
// delta xDS, as istiod does: the workload discovery service, whose
// resources are istio.workload.Address messages under TypeURL.
//
// # Contract
//
// A Server serves one *address.Index on any number of delta ADS streams
// (DeltaAggregatedResources); Run must be running for the streams to be
// kept up to date, and when Run returns every stream ends with status
// Unavailable. Serve it alone with Register, or beside another ADS
// server (go-control-plane's, for EDS and the rest) with Mux.
//
//   - Subscriptions. A stream's first request that subscribes to no name,
//     or to "*", subscribes to every resource. Otherwise the client gets
//     only the names it subscribes to, resolved as Istio resolves them
//     (address.Snapshot.Lookup): a workload's uid gives that workload; a
//     "network/IP" name the workloads with that address, else the
//     service with that VIP; a service (by "namespace/hostname" or VIP)
//     comes with the workloads that back it. Each is sent under its own
//     key, with the names it goes by (its "network/IP"s,
//     address.Aliases) as its aliases. A name that
//     resolves to nothing is sent in removed_resources, once, so the
//     client knows it does not exist. Unsubscribing drops names; what the
//     client held only for them is forgotten without a message. Names are
//     resolved again after each change, so a client follows an IP that
//     moves.
//   - Responses. The first response waits for the index to sync
//     (address.Index.HasSynced) and is sent even when empty. After that,
//     each generation of the index sends each stream at most one
//     response, holding only the resources that changed for it (added or
//     updated; removed ones in removed_resources), and nothing when
//     nothing did; a stream that falls behind gets several generations'
//     changes in one response. Resources are sorted by name.
//   - Versions. A resource's version is a hash of its deterministic wire
//     form: it changes exactly when the resource does, and is the same on
//     every stream and server. system_version_info is the index's
//     generation; each response has its own nonce.
//   - Reconnection. The first request's initial_resource_versions are
//     what the client holds: a resource with that version is not sent
//     again, a name that no longer exists is sent as removed. A client
//     that is not wildcard stays subscribed to those names, as istiod
//     reads them (ztunnel on demand resubscribes that way).
//   - ACK and NACK. Acknowledgements are tracked by nonce; a NACK is
//     logged at warn and not retried: the rejected resources are sent
//     again when they change.
//   - Other types. On a stream opened with DeltaAggregatedResources, a
//     request for another type ends the stream with InvalidArgument. On
//     a stream that Mux handed to WDS, it is answered with no resources
//     (the names it subscribes to removed), so that a ztunnel, which asks
//     for istio.security.Authorization on the same stream, becomes ready.
//     State-of-the-world streams are refused with Unimplemented unless
//     Mux hands them to another server.
//
// The server never blocks the index: each change is recorded with every
// stream and each stream's goroutine sends its own responses. It is safe
// for concurrent use.
//
// Observability: Options.Metrics registers the meshreg_xds_* series the
// server shares with package xds's (client "ztunnel"; docs/OPERATING.md
// lists them), among them the time from a change reaching the index to
// the response that carries it; Streams lists each open stream with
// what it was last sent and acknowledged, as debughttp's /streams shows
// it.
package wds
