package model

import "cmp"

// ShardKey names where a set of endpoints comes from: one provider in one
// cluster. Endpoint events carry the full endpoint list of one service from
// one shard, so consumers can index endpoints by shard and replace a
// shard's list whole.
type ShardKey struct {
	Provider Provider
	Cluster  ClusterID
}

// String returns "Provider/cluster".
func (k ShardKey) String() string { return k.Provider.String() + "/" + string(k.Cluster) }

// Compare orders shard keys by provider, Kubernetes before External, then
// by cluster ID. It returns -1, 0 or +1 as k sorts before, with or after
// o.
//
// The aggregate relies on this order: it keeps each shard's version of a
// service in it (internal/shards), so the first version it visits is of
// the provider that wins the service (ARCHITECTURE.md decision 1) and,
// among that provider's, of the first cluster by ID, whose attributes
// the merged service takes.
func (k ShardKey) Compare(o ShardKey) int {
	if c := compareProviders(k.Provider, o.Provider); c != 0 {
		return c
	}
	return cmp.Compare(k.Cluster, o.Cluster)
}
