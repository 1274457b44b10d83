package aggregate

import (
	"fmt"
	"slices"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// What the aggregate reports of its registries: whether they, and the
// wiring between them, have synced, and their diagnostics with its own.

// HasSynced reports whether every registry has synced (or exceeded
// Options.SyncTimeout), every workload handed from one registry to another
// has been applied by the receiver (see registry.Settler), and the merged initial
// state has reached the aggregate's subscribers.
func (c *Controller) HasSynced() bool {
	c.mu.Lock()
	ready := c.markIfReady()
	c.mu.Unlock()
	return ready && c.global.st.HasSynced()
}

// Settled reports whether every registry that is a registry.Settler has
// applied every input handed to it so far, and every event that produced
// has reached the aggregate's subscribers: a change made to a registry
// (an object written, a workload handed in) before Settled reports true
// is in every subscriber's hands.
func (c *Controller) Settled() bool {
	c.mu.Lock()
	before := c.handed.Load()
	for _, m := range c.allMembers() {
		if s, ok := m.reg.(registry.Settler); ok && !s.Settled() {
			c.mu.Unlock()
			return false
		}
	}
	c.mu.Unlock()
	// The members' events have reached the mergers, which published
	// what they changed before returning.
	return c.global.st.Idle() && c.handed.Load() == before
}

// PendingSync returns what the aggregate's initial sync waits for: Run
// (registry.PendingRun, with the aggregate's zero shard); each member
// that has not synced, with what its own PendingSync says (its
// informers, by kind, in its cluster) or, for a registry that is not a
// registry.SyncReporter, registry.PendingSource; each member that has
// synced but not yet applied the workloads handed to it
// (registry.PendingSettle); then the merged initial state's delivery to
// the aggregate's subscribers (registry.PendingInitial). A member past
// Options.SyncTimeout holds nothing back and is not named. It returns
// nil once the aggregate has synced. Safe for concurrent use.
func (c *Controller) PendingSync() []registry.Pending {
	if c.HasSynced() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ran {
		return []registry.Pending{{Reason: registry.PendingRun}}
	}
	var out []registry.Pending
	for _, m := range c.allMembers() {
		if c.members[m.shard] != m {
			continue // a replacement, which holds nothing back
		}
		if m.hasSynced() {
			if s, ok := m.reg.(registry.Settler); ok && !c.marked && !s.Settled() {
				out = append(out, registry.Pending{Shard: m.shard, Reason: registry.PendingSettle})
			}
			continue
		}
		if c.timedOut(m) {
			continue
		}
		if sr, ok := m.reg.(registry.SyncReporter); ok {
			if ps := sr.PendingSync(); len(ps) > 0 {
				out = append(out, ps...)
				continue
			}
		}
		out = append(out, registry.Pending{Shard: m.shard, Reason: registry.PendingSource})
	}
	if len(out) == 0 {
		return []registry.Pending{{Reason: registry.PendingInitial}}
	}
	return registry.SortPending(out)
}

// checkSync marks the merged state synced if it is ready. It runs when
// something the first sync waits for may have happened: a member synced
// (its SyncedEvent), timed out, or may have settled.
func (c *Controller) checkSync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.markIfReady()
}

// markIfReady marks the merged state synced, which publishes the
// SyncedEvent to the aggregate's subscribers, once every member has
// synced (or timed out) and settled; it reports whether every member has
// synced and the state is marked. Members' sync is checked every time:
// a registry added later holds HasSynced back until it syncs. Settling,
// which comes and goes with every change, gates only the first sync;
// nothing announces it, so while it alone is missing it is looked at
// again every Options.SyncPollInterval. The caller holds c.mu.
func (c *Controller) markIfReady() bool {
	if !c.membersSynced() {
		return false
	}
	if c.marked {
		return true
	}
	if !c.membersSettled() {
		if c.runCtx != nil && c.settleRetry == nil {
			c.settleRetry = time.AfterFunc(c.opts.SyncPollInterval, func() {
				c.mu.Lock()
				c.settleRetry = nil
				c.markIfReady()
				c.mu.Unlock()
			})
		}
		return false
	}
	c.global.st.MarkSynced()
	c.marked = true
	c.metrics.Synced(time.Since(c.started))
	return true
}

// membersSynced reports whether every member has synced (hasSynced) or
// timed out. The caller holds c.mu.
func (c *Controller) membersSynced() bool {
	for _, m := range c.members {
		if !m.hasSynced() && !c.timedOut(m) {
			return false
		}
	}
	return true
}

// membersSettled reports whether every member that has synced has also
// settled, with no workload handed between them while it looked. The
// caller holds c.mu.
func (c *Controller) membersSettled() bool {
	before := c.handed.Load()
	for _, m := range c.members {
		if s, ok := m.reg.(registry.Settler); ok && m.hasSynced() && !s.Settled() {
			return false
		}
	}
	return c.handed.Load() == before
}

// hasSynced reports whether m has synced: its SyncedEvent reached the
// global merger (m's own HasSynced waits for the aggregate's handler to
// return from it), or m says so.
func (m *member) hasSynced() bool { return m.synced.Load() || m.reg.HasSynced() }

func (c *Controller) timedOut(m *member) bool {
	return c.opts.SyncTimeout > 0 && !m.started.IsZero() && time.Since(m.started) >= c.opts.SyncTimeout
}

// Diagnostics returns the diagnostics of every registry and the
// aggregate's own: ServiceEntries shadowed by Kubernetes Services, port
// disagreements between clusters, registries that did not sync in time.
func (c *Controller) Diagnostics() []model.Diagnostic {
	out := slices.Clone(c.global.st.Diagnostics())
	c.mu.Lock()
	for _, m := range c.allMembers() {
		out = append(out, m.reg.Diagnostics()...)
		if !m.reg.HasSynced() && c.timedOut(m) {
			out = append(out, model.Diagnostic{
				Severity: model.Warning, Kind: "Registry", Name: m.shard.Provider.String(), Cluster: m.shard.Cluster,
				Message: fmt.Sprintf("did not sync within %s; the aggregate reports synced without it, and its objects appear as they arrive", c.opts.SyncTimeout),
			})
		}
	}
	out = append(out, c.meshDiagnostics()...)
	c.mu.Unlock()
	model.SortDiagnostics(out)
	return slices.CompactFunc(out, func(a, b model.Diagnostic) bool { return a == b })
}

// meshDiagnostics reports networks whose endpoints come from the registry of a cluster the aggregate has
// no Kubernetes registry of, and gateways into networks the mesh
// networks do not declare. The caller holds c.mu.
func (c *Controller) meshDiagnostics() []model.Diagnostic {
	if c.mesh == nil {
		return nil
	}
	var out []model.Diagnostic
	for _, gw := range c.global.st.NetworkGateways() {
		if _, ok := c.mesh.Networks[gw.Network]; !ok && gw.Source != model.GatewayFromMeshNetworks {
			out = append(out, model.Diagnostic{
				Severity: model.Warning, Kind: "MeshNetworks", Name: string(gw.Network), Cluster: gw.Cluster,
				Message: fmt.Sprintf("gateway %s leads into network %s, which the mesh networks do not declare", gw, gw.Network),
			})
		}
	}
	for name, nw := range c.mesh.Networks {
		for _, ep := range nw.Endpoints {
			if ep.FromRegistry == "" || c.members[model.ShardKey{Provider: model.Kubernetes, Cluster: ep.FromRegistry}] != nil {
				continue
			}
			out = append(out, model.Diagnostic{
				Severity: model.Warning, Kind: "MeshNetworks", Name: string(name), Cluster: ep.FromRegistry,
				Message: fmt.Sprintf("network %s takes the endpoints of cluster %s, which has no Kubernetes registry here", name, ep.FromRegistry),
			})
		}
	}
	return out
}
