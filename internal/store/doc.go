// Package store holds the state of one registry: services, endpoints,
// workloads and diagnostics of one shard (one provider in one cluster),
// with the indexes queries need and the notifier that publishes every
// change.
//
// Registries (the kube and serviceentry controllers, the in-memory
// registry) convert their sources into model values and write them to a
// Store; the Store decides what changed, keeps the indexes
// (internal/index), and publishes events. A registry keeps its *Store
// private and answers registry.Discovery, Subscribe and HasSynced from
// it. The aggregate's merged state, of many shards, is the aggregate's
// own.
//
// Writes take ownership of the values passed in: the caller must not modify
// them afterwards.
package store
