package aggregate

import (
	"slices"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The aggregate wires registries to each other: every workload event of a
// registry is handed, in order, to every other registry that implements
// registry.WorkloadHandler, when Options.ShareWorkload allows. Pods so reach
// ServiceEntry workloadSelectors, and WorkloadEntries (a remote cluster's
// too, from its WorkloadEntriesOnly serviceentry registry) reach the
// Kubernetes Service selectors of their cluster and ServiceEntry
// workloadSelectors, without glue in the user's code.
//
// Forwarding happens in the global merger's handler, under its lock, so
// the workloads handed to the sinks are always exactly the global store's:
// a sink added later is handed the store's workloads, and a registry
// removed has its workloads' deletes handed out.

// forward hands a workload event of member from to every sink. The caller
// holds the global merger's mu.
func (c *Controller) forward(from *member, ev registry.WorkloadEvent) {
	sinks := c.sinks.Load()
	if sinks == nil {
		return
	}
	for _, s := range *sinks {
		if s == from || s.shard == from.shard {
			continue
		}
		c.handTo(s, ev)
	}
}

// handTo hands ev to sink s, translated by ShareWorkload: an update that
// leaves the sink's view becomes a delete, one that enters it an add.
func (c *Controller) handTo(s *member, ev registry.WorkloadEvent) {
	h := s.reg.(registry.WorkloadHandler)
	share := func(w *model.WorkloadInstance) bool {
		return w != nil && c.opts.ShareWorkload(w, s.shard)
	}
	prev, cur := share(ev.Previous), share(ev.Current)
	if prev || cur {
		c.handed.Add(1)
	}
	switch {
	case prev && cur:
		h.HandleWorkload(ev)
	case cur:
		h.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: ev.Current})
	case prev:
		h.HandleWorkload(registry.WorkloadEvent{Type: model.EventDelete, Previous: ev.Previous})
	}
}

// addSink registers m as a sink and hands it the workloads already known.
// The caller holds c.mu.
func (c *Controller) addSink(m *member, _ registry.WorkloadHandler) {
	g := c.global
	g.mu.Lock()
	defer g.mu.Unlock()
	var next []*member
	if cur := c.sinks.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, m)
	c.sinks.Store(&next)
	for _, w := range g.st.Workloads() {
		if workloadShard(w) != m.shard {
			c.handTo(m, registry.WorkloadEvent{Type: model.EventAdd, Current: w})
		}
	}
}

// removeSink unregisters m as a sink. The caller holds c.mu.
func (c *Controller) removeSink(m *member) {
	g := c.global
	g.mu.Lock()
	defer g.mu.Unlock()
	cur := c.sinks.Load()
	if cur == nil {
		return
	}
	next := slices.DeleteFunc(slices.Clone(*cur), func(x *member) bool { return x == m })
	c.sinks.Store(&next)
}

// forwardDeletes hands the deletes of a shard's workloads to the sinks.
// The caller holds the global merger's mu.
func (c *Controller) forwardDeletes(shard model.ShardKey, deleted []*model.WorkloadInstance) {
	sinks := c.sinks.Load()
	if sinks == nil {
		return
	}
	for _, w := range deleted {
		for _, s := range *sinks {
			if s.shard != shard {
				c.handTo(s, registry.WorkloadEvent{Type: model.EventDelete, Previous: w})
			}
		}
	}
}
