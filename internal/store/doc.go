// Package store holds a registry's state: services, each shard's
// endpoints of them, workloads, diagnostics and network gateways, with
// the indexes queries need and the notifier that publishes every change.
//
// Registries (the kube and serviceentry controllers, the in-memory
// registry) convert their sources into model values and write them to a
// Store of their one shard (a provider in a cluster); the aggregate
// writes every registry's merged services and each shard's endpoints to
// one Store of many shards. The Store decides what changed, keeps the
// indexes (internal/index), merges the shards' sorted lists of a service
// into one, and publishes events. Its owner keeps the *Store private and
// answers registry.Reader from it.
//
// Writes take ownership of the values passed in: the caller must not modify
// them afterwards.
package store
