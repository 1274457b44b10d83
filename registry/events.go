package registry

import "github.com/meshreg/meshreg/model"

// Event is one change a registry publishes: a ServiceEvent, an
// EndpointsEvent, a WorkloadEvent, a NetworkGatewaysEvent, a
// ClusterEvent, a NamespaceEvent or a GatewayEvent; or the SyncedEvent
// that says the initial state is complete.
type Event interface {
	// Deliver calls the handler's method for the event's kind.
	Deliver(h Handler)
}

// ServiceEvent reports that a service was added, changed or deleted.
//
// Previous is nil for an add, Current is nil for a delete; an update
// carries both. Values are never modified after publication.
type ServiceEvent struct {
	Type              model.EventType
	Previous, Current *model.Service
	// Initial is true for the add events that replay a registry's state
	// to a new subscriber, false for changes.
	Initial bool
}

// Service returns the current service, or on delete the last one.
func (e ServiceEvent) Service() *model.Service {
	if e.Current != nil {
		return e.Current
	}
	return e.Previous
}

// Deliver calls h.OnService.
func (e ServiceEvent) Deliver(h Handler) { h.OnService(e) }

// EndpointsEvent carries the full endpoint list of one service from one
// shard, after a change. An empty list means the shard has no endpoints for
// the service any more. Consumers replace the shard's previous list with
// this one; they never see a partial update.
type EndpointsEvent struct {
	Shard     model.ShardKey
	Service   model.ServiceKey
	Endpoints []*model.Endpoint
	// All are the service's endpoints from every shard whose list
	// belongs to it, merged and sorted, once the change this event is
	// part of is complete: what Endpoints(Service, EndpointQuery{})
	// returns then. A consumer that wants the service's endpoints, not
	// one shard's, takes them here and need not ask the registry. In a
	// registry of one shard they are Endpoints. Shared; never modified.
	All []*model.Endpoint
	// Initial is true for the events that replay a registry's state to a
	// new subscriber, false for changes.
	Initial bool
}

// Deliver calls h.OnEndpoints.
func (e EndpointsEvent) Deliver(h Handler) { h.OnEndpoints(e) }

// WorkloadEvent reports that a workload instance was added, changed or
// deleted. Previous is nil for an add, Current is nil for a delete.
type WorkloadEvent struct {
	Type              model.EventType
	Previous, Current *model.WorkloadInstance
	// Initial is true for the add events that replay a registry's state
	// to a new subscriber, false for changes.
	Initial bool
}

// Workload returns the current workload, or on delete the last one.
func (e WorkloadEvent) Workload() *model.WorkloadInstance {
	if e.Current != nil {
		return e.Current
	}
	return e.Previous
}

// Deliver calls h.OnWorkload.
func (e WorkloadEvent) Deliver(h Handler) { h.OnWorkload(e) }

// NetworkGatewaysEvent carries a registry's complete list of network
// gateways after a change, sorted by model.NetworkGateway.Compare. An
// empty list means the registry has none any more. Consumers replace the
// previous list with this one.
type NetworkGatewaysEvent struct {
	Gateways []model.NetworkGateway
	// Initial is true for the event that replays a registry's gateways
	// to a new subscriber, false for changes.
	Initial bool
}

// Deliver calls h.OnNetworkGateways when h is a GatewayHandler.
func (e NetworkGatewaysEvent) Deliver(h Handler) {
	if gh, ok := h.(GatewayHandler); ok {
		gh.OnNetworkGateways(e)
	}
}

// GatewayHandler is implemented by handlers that take network gateway
// events. A handler that does not implement it is not sent them; for
// those that do, the contract of Handler holds: the gateways come in
// order with the other events, after the initial workloads.
type GatewayHandler interface {
	OnNetworkGateways(NetworkGatewaysEvent)
}

// ClusterEvent reports that a cluster's data (its network) was
// published, changed or withdrawn: a kube registry publishes its
// cluster's when it syncs and whenever it changes, and the aggregate
// withdraws it (a delete) when the registry leaves. Previous is nil for
// an add, Current is nil for a delete.
type ClusterEvent struct {
	Type              model.EventType
	Previous, Current *model.Cluster
	// Initial is true for the add events that replay a registry's state
	// to a new subscriber, false for changes.
	Initial bool
}

// Cluster returns the current cluster, or on delete the last one.
func (e ClusterEvent) Cluster() *model.Cluster {
	if e.Current != nil {
		return e.Current
	}
	return e.Previous
}

// Deliver calls h.OnCluster when h is a MetadataHandler.
func (e ClusterEvent) Deliver(h Handler) {
	if mh, ok := h.(MetadataHandler); ok {
		mh.OnCluster(e)
	}
}

// NamespaceEvent reports that a namespace was added, changed or deleted.
// Previous is nil for an add, Current is nil for a delete.
type NamespaceEvent struct {
	Type              model.EventType
	Previous, Current *model.Namespace
	// Initial is true for the add events that replay a registry's state
	// to a new subscriber, false for changes.
	Initial bool
}

// Namespace returns the current namespace, or on delete the last one.
func (e NamespaceEvent) Namespace() *model.Namespace {
	if e.Current != nil {
		return e.Current
	}
	return e.Previous
}

// Deliver calls h.OnNamespace when h is a MetadataHandler.
func (e NamespaceEvent) Deliver(h Handler) {
	if mh, ok := h.(MetadataHandler); ok {
		mh.OnNamespace(e)
	}
}

// GatewayEvent reports that a Gateway API Gateway was added, changed or
// deleted. Previous is nil for an add, Current is nil for a delete.
type GatewayEvent struct {
	Type              model.EventType
	Previous, Current *model.Gateway
	// Initial is true for the add events that replay a registry's state
	// to a new subscriber, false for changes.
	Initial bool
}

// Gateway returns the current Gateway, or on delete the last one.
func (e GatewayEvent) Gateway() *model.Gateway {
	if e.Current != nil {
		return e.Current
	}
	return e.Previous
}

// Deliver calls h.OnGateway when h is a MetadataHandler.
func (e GatewayEvent) Deliver(h Handler) {
	if mh, ok := h.(MetadataHandler); ok {
		mh.OnGateway(e)
	}
}

// MetadataHandler is implemented by handlers that take the cluster
// metadata a registry holds beside its services and workloads: each
// cluster's network, its namespaces and its Gateway API Gateways (what
// ambient mode's index reads). A handler that does not implement it is
// not sent them; for those that do, the contract of Handler holds.
type MetadataHandler interface {
	OnCluster(ClusterEvent)
	OnNamespace(NamespaceEvent)
	OnGateway(GatewayEvent)
}

// Handler receives a registry's events.
//
// Consistency contract:
//   - A handler's methods are called one at a time, never concurrently
//     with each other for the same subscription, in the order the registry
//     made the changes.
//   - A handler first receives the registry's state at the moment it
//     subscribed, as add events marked Initial: every service, then every
//     non-empty endpoint list, then every workload, then (to a
//     GatewayHandler) a non-empty list of network gateways, then (to a
//     MetadataHandler) every cluster, namespace and Gateway, each kind
//     sorted by key.
//   - A service's add event comes before its first endpoints event; when a
//     service is deleted, an empty endpoints event for each shard that had
//     endpoints comes before the delete.
//   - An update that changes nothing is not published.
//   - Changes coalesce per object before they are published, never
//     after. A registry applies its inputs in passes of its worker (a
//     Kubernetes object's latest version, a ServiceEntry's, a workload
//     handed in), so several changes of one object between two passes
//     are one event carrying the net change, and changes that cancel out
//     (an update and its reversal, an object added and deleted before
//     the registry applied it) publish nothing. An event, once published,
//     reaches each handler that takes its kind, in order, for as long as
//     the handler is subscribed: a slow handler is never sent a summary
//     in place of the events it has not handled yet.
//   - A SyncHandler receives one SyncedEvent, after the events that hold
//     the registry's initial state: when the registry syncs, or, for a
//     handler that subscribes later, right after its initial events.
//     HasSynced says the same to those who ask; a consumer that takes
//     the event needs no polling.
//   - A registry that is also a Settler says when every input handed to
//     it so far has been applied and its events delivered (Settled).
//   - Handlers are called without any registry lock held: they may query
//     the registry, and subscribe or unsubscribe, but the registry may
//     have moved on from the state the event describes. A slow handler
//     delays only its own subscription's events.
//
// A handler must not modify the values it receives.
type Handler interface {
	OnService(ServiceEvent)
	OnEndpoints(EndpointsEvent)
	OnWorkload(WorkloadEvent)
}

// EventKinds is a set of kinds of event, for Selective handlers.
type EventKinds uint8

// The kinds of event.
const (
	ServiceEvents EventKinds = 1 << iota
	EndpointsEvents
	WorkloadEvents
	NetworkGatewayEvents
	SyncedEvents
	// MetadataEvents are ClusterEvents, NamespaceEvents and
	// GatewayEvents.
	MetadataEvents

	AllEvents = ServiceEvents | EndpointsEvents | WorkloadEvents | NetworkGatewayEvents | SyncedEvents | MetadataEvents
)

// kindOf returns the kind of ev; AllEvents for an event of another type,
// which every subscriber that wants any kind receives.
func kindOf(ev Event) EventKinds {
	switch ev.(type) {
	case ServiceEvent:
		return ServiceEvents
	case EndpointsEvent:
		return EndpointsEvents
	case WorkloadEvent:
		return WorkloadEvents
	case NetworkGatewaysEvent:
		return NetworkGatewayEvents
	case SyncedEvent:
		return SyncedEvents
	case ClusterEvent, NamespaceEvent, GatewayEvent:
		return MetadataEvents
	}
	return AllEvents
}

// kindsOf returns the kinds of event a handler takes: those a Selective
// handler names, else every kind, gateway events only to a
// GatewayHandler and the synced event only to a SyncHandler.
func kindsOf(h Handler) EventKinds {
	if sel, ok := h.(Selective); ok {
		return sel.EventKinds()
	}
	k := AllEvents
	if _, ok := h.(GatewayHandler); !ok {
		k &^= NetworkGatewayEvents
	}
	if _, ok := h.(SyncHandler); !ok {
		k &^= SyncedEvents
	}
	if _, ok := h.(MetadataHandler); !ok {
		k &^= MetadataEvents
	}
	return k
}

// Selective is implemented by handlers that take only some kinds of
// event. A Notifier asks once, at subscription, and from then on neither
// queues nor delivers the other kinds to the handler, initial events
// included: a subscriber of endpoints alone does not pay for the
// workload events of every Pod change. The contract of Handler holds for
// the kinds delivered. HandlerFuncs is Selective: it takes the kinds
// whose function is set.
type Selective interface {
	Handler
	EventKinds() EventKinds
}

// HandlerFuncs adapts functions to a Handler. A nil function ignores its
// events, which are then not queued for it at all (see Selective).
type HandlerFuncs struct {
	ServiceFunc   func(ServiceEvent)
	EndpointsFunc func(EndpointsEvent)
	WorkloadFunc  func(WorkloadEvent)
	// NetworkGatewaysFunc takes network gateway events (see
	// GatewayHandler).
	NetworkGatewaysFunc func(NetworkGatewaysEvent)
	// SyncedFunc takes the synced event (see SyncHandler).
	SyncedFunc func(SyncedEvent)
	// ClusterFunc, NamespaceFunc and GatewayFunc take the cluster
	// metadata's events (see MetadataHandler); a HandlerFuncs with any of
	// them set is sent all three kinds, and calls the ones set.
	ClusterFunc   func(ClusterEvent)
	NamespaceFunc func(NamespaceEvent)
	GatewayFunc   func(GatewayEvent)
}

var (
	_ Selective       = HandlerFuncs{}
	_ GatewayHandler  = HandlerFuncs{}
	_ SyncHandler     = HandlerFuncs{}
	_ MetadataHandler = HandlerFuncs{}
)

// EventKinds returns the kinds of event whose function is set.
func (f HandlerFuncs) EventKinds() EventKinds {
	var k EventKinds
	if f.ServiceFunc != nil {
		k |= ServiceEvents
	}
	if f.EndpointsFunc != nil {
		k |= EndpointsEvents
	}
	if f.WorkloadFunc != nil {
		k |= WorkloadEvents
	}
	if f.NetworkGatewaysFunc != nil {
		k |= NetworkGatewayEvents
	}
	if f.SyncedFunc != nil {
		k |= SyncedEvents
	}
	if f.ClusterFunc != nil || f.NamespaceFunc != nil || f.GatewayFunc != nil {
		k |= MetadataEvents
	}
	return k
}

// OnService calls ServiceFunc if it is set.
func (f HandlerFuncs) OnService(e ServiceEvent) {
	if f.ServiceFunc != nil {
		f.ServiceFunc(e)
	}
}

// OnEndpoints calls EndpointsFunc if it is set.
func (f HandlerFuncs) OnEndpoints(e EndpointsEvent) {
	if f.EndpointsFunc != nil {
		f.EndpointsFunc(e)
	}
}

// OnWorkload calls WorkloadFunc if it is set.
func (f HandlerFuncs) OnWorkload(e WorkloadEvent) {
	if f.WorkloadFunc != nil {
		f.WorkloadFunc(e)
	}
}

// OnNetworkGateways calls NetworkGatewaysFunc if it is set.
func (f HandlerFuncs) OnNetworkGateways(e NetworkGatewaysEvent) {
	if f.NetworkGatewaysFunc != nil {
		f.NetworkGatewaysFunc(e)
	}
}

// OnSynced calls SyncedFunc if it is set.
func (f HandlerFuncs) OnSynced(e SyncedEvent) {
	if f.SyncedFunc != nil {
		f.SyncedFunc(e)
	}
}

// OnCluster calls ClusterFunc if it is set.
func (f HandlerFuncs) OnCluster(e ClusterEvent) {
	if f.ClusterFunc != nil {
		f.ClusterFunc(e)
	}
}

// OnNamespace calls NamespaceFunc if it is set.
func (f HandlerFuncs) OnNamespace(e NamespaceEvent) {
	if f.NamespaceFunc != nil {
		f.NamespaceFunc(e)
	}
}

// OnGateway calls GatewayFunc if it is set.
func (f HandlerFuncs) OnGateway(e GatewayEvent) {
	if f.GatewayFunc != nil {
		f.GatewayFunc(e)
	}
}
