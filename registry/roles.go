package registry

import "github.com/meshreg/meshreg/model"

// Reader is what a consumer needs of a registry: its queries, a
// subscription to its events, and whether its initial state is complete
// (HasSynced, and the SyncedEvent a subscription receives).
// Every registry (the kube and serviceentry controllers, registry/memory)
// and the aggregate are Readers; consumers (proxyview, debughttp, the
// examples) take one. See Handler for the subscription's contract.
type Reader interface {
	Discovery
	// Subscribe registers a handler and returns a function that
	// unregisters it (see Controller.Subscribe).
	Subscribe(h Handler) (unsubscribe func())
	// HasSynced reports whether the initial state is complete and has
	// reached every handler subscribed when it became complete.
	HasSynced() bool
}

// The optional roles a registry may have besides Registry. The aggregate
// finds them by type assertion when a registry is added; each
// implementation asserts its roles with var _ declarations, so that a
// renamed method breaks the build rather than the wiring.

// WorkloadHandler is implemented by registries whose selectors select the
// workloads of other registries: the kube controller (WorkloadEntries for
// its Services) and the serviceentry controller (Pods and other clusters'
// WorkloadEntries for its workloadSelectors). The aggregate hands such a
// registry every other registry's workload events, filtered by its
// Options.ShareWorkload. A handler ignores the kinds it does not select.
type WorkloadHandler interface {
	HandleWorkload(WorkloadEvent)
}

// Settler is implemented by registries that can say whether they have
// caught up with their inputs: the kube and serviceentry controllers
// (whose workers apply informer events and handed workloads), the
// in-memory registry, and the aggregate (over its registries). Settled
// reports whether every input so far has been applied and its events
// delivered to the registry's subscribers: a consumer that made a change
// (wrote an object, handed a workload) and then sees Settled report true
// knows the change has reached every handler. The aggregate's HasSynced
// waits for its registries to settle, so that a synced aggregate already
// holds what the wiring between registries produces.
type Settler interface {
	Settled() bool
}

// MeshNetworksHandler is implemented by registries that read the mesh
// networks: the kube controller. The aggregate hands each one its
// Options.MeshNetworks when it is added.
type MeshNetworksHandler interface {
	SetMeshNetworks(*model.MeshNetworks)
}
