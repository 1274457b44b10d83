package aggregate

import (
	"fmt"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Replace swaps the registry of r's provider and cluster for r, for
// example after the cluster's credentials changed, without a moment in
// which the cluster's services or endpoints are missing. While the
// aggregate runs, the old registry keeps serving until r has synced; then
// the old one is removed and whatever only it knew is deleted. When the
// aggregate is not running the swap is immediate. With no registry to
// replace, Replace is Add. Replacing a registry with itself is an error
// wrapping ErrDuplicate, and a nil registry one wrapping ErrNilRegistry.
func (c *Controller) Replace(r registry.Registry) error {
	if r == nil {
		return fmt.Errorf("aggregate: replace: %w", ErrNilRegistry)
	}
	shard := shardOf(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.members[shard]
	if cur == nil {
		c.members[shard] = c.attach(r)
		return nil
	}
	if cur.reg == r || c.pending[shard] != nil && c.pending[shard].reg == r {
		return fmt.Errorf("aggregate: replace %s with the registry already there: %w", shard, ErrDuplicate)
	}
	if p := c.pending[shard]; p != nil {
		delete(c.pending, shard)
		c.retire(p)
	}
	m := c.attach(r)
	c.pending[shard] = m
	c.opts.Logger.Info("registry replacement pending", "shard", shard.String())
	if c.runCtx == nil {
		c.promote(shard, m)
	}
	// Otherwise m takes over when its SyncedEvent reaches the global
	// merger (memberSynced), with its initial state.
	return nil
}

// promote makes the pending member m current for shard. The caller holds
// c.mu.
func (c *Controller) promote(shard model.ShardKey, m *member) {
	if c.pending[shard] != m {
		return // superseded or removed meanwhile
	}
	delete(c.pending, shard)
	old := c.members[shard]
	c.members[shard] = m
	if old != nil {
		c.retire(old)
	}
	c.forMergers(shard.Cluster, func(g *merger, global bool) {
		deleted := g.prune(shard, m.reg)
		if global {
			c.forwardDeletes(shard, deleted)
		}
	})
	c.opts.Logger.Info("registry replaced", "shard", shard.String())
}
