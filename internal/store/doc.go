// Package store holds the state of one registry shard (one provider in one
// cluster): services, endpoints, workloads and diagnostics, with the indexes
// queries need and the notifier that publishes every change.
//
// Registries (the kube and serviceentry controllers, the in-memory
// registry) convert their sources into model values and write them here;
// the Store decides what changed, keeps the indexes, and publishes events.
// A registry embeds the Store's Reader to answer registry.Discovery and
// Subscribe, and keeps the *Store itself private for writing.
//
// Writes take ownership of the values passed in: the caller must not modify
// them afterwards.
package store
