package kube

import (
	"context"
	"sync"

	"github.com/meshreg/meshreg/internal/syncreport"
	"github.com/meshreg/meshreg/registry"
)

// What holds the controller's initial sync back (registry.SyncReporter).

// informerKinds are the kinds of object each informer watches, by the
// informer's name.
var informerKinds = map[string]string{
	servicesInformer:       "Service",
	endpointSlicesInformer: "EndpointSlice",
	podsInformer:           "Pod",
	nodesInformer:          "Node",
	namespacesInformer:     "Namespace",
	gatewaysInformer:       "Gateway",
	serviceExportsInformer: "ServiceExport",
	serviceImportsInformer: "ServiceImport",
}

// PendingSync returns what the initial sync waits for: Run
// (registry.PendingRun); the informers that have not delivered their
// initial lists, by kind (registry.PendingList); then the conversion of
// the initial state and its delivery to the subscribers
// (registry.PendingInitial). It returns nil once the controller has
// synced. Safe for concurrent use.
func (c *Controller) PendingSync() []registry.Pending {
	if c.store.HasSynced() {
		return nil
	}
	infs := c.listing.Load()
	if infs == nil {
		return []registry.Pending{{Shard: c.shard, Reason: registry.PendingRun}}
	}
	var out []registry.Pending
	for _, in := range *infs {
		if !in.synced() {
			out = append(out, registry.Pending{Shard: c.shard, Reason: registry.PendingList, Kind: informerKinds[in.name]})
		}
	}
	if len(out) == 0 {
		return []registry.Pending{{Shard: c.shard, Reason: registry.PendingInitial}}
	}
	return registry.SortPending(out)
}

// reportSync logs what holds the initial sync back once it has taken
// Options.SyncReportInterval, and every interval after, on a goroutine
// of wg, until the controller syncs or ctx is done. Run calls it once
// its informers' handlers are added (c.listing is set).
func (c *Controller) reportSync(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() { syncreport.Watch(ctx, c.log, c.opts.SyncReportInterval, c.PendingSync) })
}
