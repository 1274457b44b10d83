// Package registry defines the contracts every meshreg registry meets, the
// events registries publish, the handler set they publish through, and the
// dump of a registry's state.
//
// A registry is three small roles composed (see Registry): Discovery
// answers queries, Controller runs the registry and lets handlers
// subscribe, and Provider and Cluster say where its objects come from. The
// kube and serviceentry controllers, the aggregate, and the in-memory
// registry in registry/memory all implement Registry, so code written
// against it can be tested with the in-memory registry and run against the
// real ones.
//
// # Events
//
// A registry publishes three kinds of event: a ServiceEvent when a service
// is added, changed or deleted; an EndpointsEvent carrying the complete
// endpoint list of one service from one shard (provider, cluster) after a
// change; and a WorkloadEvent when a Pod or WorkloadEntry instance changes.
// A registry that knows network gateways (GatewayDiscovery: the kube
// controller, the aggregate) also publishes a NetworkGatewaysEvent with
// its whole list when it changes, to the handlers that take it
// (GatewayHandler). See Handler for the ordering and concurrency
// contract. A handler that takes only some kinds (a HandlerFuncs with
// some functions nil, or any Selective handler) is neither queued nor
// handed the others.
//
// # Dump
//
// NewDump and WriteJSON render any Discovery in the registry dump format,
// version 1: deterministic, byte for byte, for a given state.
package registry
