package kube

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// inbox holds the changes waiting for the controller's worker: the latest
// version of each object that changed since the worker last looked (nil:
// deleted). The informers' handlers and HandleWorkload put changes in and
// wake the worker; the worker takes them all at once. Its mutex is held
// only to put or take, so no caller waits for a conversion: the
// aggregate, which calls HandleWorkload holding a lock of its own, never
// holds it while this registry computes.
type inbox struct {
	mu      sync.Mutex
	pending changes
	// busy is set from the worker's take to its done: changes taken
	// but not yet applied and published.
	busy bool
	// wake has room for one signal: changes are pending.
	wake chan struct{}
}

// changes are objects changed, by kind and key.
type changes struct {
	services   map[types.NamespacedName]*corev1.Service
	slices     map[types.NamespacedName]*sliceInfo
	pods       map[types.NamespacedName]*podInfo
	nodes      map[types.NamespacedName]*corev1.Node
	namespaces map[types.NamespacedName]*corev1.Namespace
	entries    map[model.WorkloadKey]*model.WorkloadInstance
	gateways   map[types.NamespacedName]*gatewayInfo
	exports    map[types.NamespacedName]*exportInfo
	imports    map[types.NamespacedName]*importInfo
	// mesh is the latest SetMeshNetworks, nil when none is pending.
	mesh *meshChange
}

func newChanges() changes {
	return changes{
		services:   map[types.NamespacedName]*corev1.Service{},
		slices:     map[types.NamespacedName]*sliceInfo{},
		pods:       map[types.NamespacedName]*podInfo{},
		nodes:      map[types.NamespacedName]*corev1.Node{},
		namespaces: map[types.NamespacedName]*corev1.Namespace{},
		entries:    map[model.WorkloadKey]*model.WorkloadInstance{},
		gateways:   map[types.NamespacedName]*gatewayInfo{},
		exports:    map[types.NamespacedName]*exportInfo{},
		imports:    map[types.NamespacedName]*importInfo{},
	}
}

func (ch *changes) empty() bool {
	return ch.mesh == nil && len(ch.services)+len(ch.slices)+len(ch.pods)+len(ch.nodes)+len(ch.namespaces)+len(ch.entries)+len(ch.gateways)+len(ch.exports)+len(ch.imports) == 0
}

func newInbox() *inbox {
	return &inbox{pending: newChanges(), wake: make(chan struct{}, 1)}
}

// put records one change with set, under the inbox's lock, and wakes the
// worker.
func (in *inbox) put(set func(ch *changes)) {
	in.mu.Lock()
	set(&in.pending)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// take returns the pending changes, leaving in their place the emptied
// maps of spare (the changes the worker applied last), and marks the
// inbox busy until done.
func (in *inbox) take(spare changes) changes {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch := in.pending
	in.pending = spare
	in.busy = true
	return ch
}

// done marks the changes taken as applied and published.
func (in *inbox) done() {
	in.mu.Lock()
	in.busy = false
	in.mu.Unlock()
}

// idle reports whether nothing is pending or being applied.
func (in *inbox) idle() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return !in.busy && in.pending.empty()
}

// maxReusedChanges is the size above which a map of changes is dropped
// rather than emptied for reuse (a Go map never shrinks, and clearing
// costs its capacity): the initial lists fill the maps with every object.
const maxReusedChanges = 1024

// emptied returns ch with every map emptied for reuse.
func emptied(ch changes) changes {
	ch.services = emptiedMap(ch.services)
	ch.slices = emptiedMap(ch.slices)
	ch.pods = emptiedMap(ch.pods)
	ch.nodes = emptiedMap(ch.nodes)
	ch.namespaces = emptiedMap(ch.namespaces)
	ch.entries = emptiedMap(ch.entries)
	ch.gateways = emptiedMap(ch.gateways)
	ch.exports = emptiedMap(ch.exports)
	ch.imports = emptiedMap(ch.imports)
	ch.mesh = nil
	return ch
}

func emptiedMap[K comparable, V any](m map[K]V) map[K]V {
	if len(m) > maxReusedChanges {
		return map[K]V{}
	}
	clear(m)
	return m
}

// apply applies a batch of changes to the cluster, marking dirty what
// they affect (see the on* functions). The state is a function of the
// objects alone, so the order of a batch does not matter.
func (c *Controller) apply(ch changes) {
	if ch.mesh != nil {
		c.onMeshNetworks(ch.mesh.networks)
	}
	for k, ns := range ch.namespaces {
		c.onNamespace(k, ns)
	}
	for k, n := range ch.nodes {
		c.onNode(k, n)
	}
	for k, svc := range ch.services {
		c.onService(k, svc)
	}
	for k, pod := range ch.pods {
		c.onPod(k, pod)
	}
	for k, s := range ch.slices {
		c.onSlice(k, s)
	}
	for k, we := range ch.entries {
		c.onEntry(k, we)
	}
	for k, gw := range ch.gateways {
		c.onGateway(k, gw)
	}
	for k, e := range ch.exports {
		c.onExport(k, e)
	}
	for k, i := range ch.imports {
		c.onImport(k, i)
	}
}
