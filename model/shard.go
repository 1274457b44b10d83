package model

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
