// Package shards provides Map, a small map keyed by model.ShardKey kept
// as a sorted slice.
//
// The registry keeps several values per service and shard (each shard's
// version of a service, each shard's endpoint list). A service almost
// always has one shard, sometimes a few; a Go map per service costs
// hundreds of bytes and an allocation even for one entry, and its keys
// must be sorted whenever the shards are visited in order. A Map holds
// one entry in a single small allocation and visits its entries in shard
// order (model.ShardKey.Compare: Kubernetes before External, then by
// cluster ID) without sorting.
package shards
