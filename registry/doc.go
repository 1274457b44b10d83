// Package registry defines the contracts every meshreg registry meets, the
// events registries publish, the handler set they publish through, and the
// dump of a registry's state.
//
// A registry is small roles composed (see Registry): Discovery answers
// queries, Controller runs the registry and lets handlers subscribe, and
// Provider and Cluster say where its objects come from. Reader is what a
// consumer needs of one: queries, a subscription and HasSynced. What
// implements what:
//
//	                          Reader  Registry  GatewayDiscovery  WorkloadHandler  Settler  MeshNetworksHandler
//	kube.Controller             yes     yes          yes               yes           yes           yes
//	serviceentry.Controller     yes     yes                            yes           yes
//	memory.Registry             yes     yes          yes                             yes
//	aggregate.Controller        yes                  yes                             yes
//
// Every one of them is also a SyncReporter: PendingSync says what its
// initial sync still waits for (Run, an informer's list by kind, a
// member of the aggregate), which WaitSynced's error (a *SyncError), the
// registries' logs once a sync is slow, debughttp and the metrics show.
//
// The aggregate merges registries of every provider and cluster, so it has
// no Provider or Cluster of its own and is a Reader (and a Controller), not
// a Registry. The optional roles are found by type assertion where they
// are used (the aggregate's wiring, its sync, the proxy view's gateways);
// each implementation asserts them with var _ declarations. Code written
// against Reader can be tested with the in-memory registry and run
// against the real ones or the aggregate.
//
// # Events
//
// A registry publishes three kinds of change: a ServiceEvent when a service
// is added, changed or deleted; an EndpointsEvent carrying the complete
// endpoint list of one service from one shard (provider, cluster) after a
// change; and a WorkloadEvent when a Pod or WorkloadEntry instance changes.
// A registry that knows network gateways (GatewayDiscovery: the kube
// controller, the aggregate) also publishes a NetworkGatewaysEvent with
// its whole list when it changes, to the handlers that take it
// (GatewayHandler). Once its initial state is complete, a registry
// publishes one SyncedEvent, after the events that hold that state, to
// the handlers that take it (SyncHandler); a later subscriber gets it at
// the end of its initial events. WaitSynced waits for it, so nothing
// needs to poll HasSynced. See Handler for the ordering and concurrency
// contract. A handler that takes only some kinds (a HandlerFuncs with
// some functions nil, or any Selective handler) is neither queued nor
// handed the others.
//
// # Dump
//
// NewDump and WriteJSON render any Discovery in the registry dump format,
// version 1: deterministic, byte for byte, for a given state.
package registry
