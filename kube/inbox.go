package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/internal/workqueue"
	"github.com/meshreg/meshreg/model"
)

// The changes waiting for the controller's worker are a queue
// (internal/workqueue) of changes: the latest version of each object
// that changed since the worker last looked (nil: deleted). The
// informers' handlers and HandleWorkload add to it; the worker takes it
// all at once. Its lock is held only to add or take, so no caller waits
// for a conversion: the aggregate, which calls HandleWorkload holding a
// lock of its own, never holds it while this registry computes.
type inbox = workqueue.Queue[changes]

// changes are objects changed, by kind and key.
type changes struct {
	services       map[types.NamespacedName]*corev1.Service
	slices         map[types.NamespacedName]*sliceInfo
	pods           map[types.NamespacedName]*podInfo
	nodes          map[types.NamespacedName]*corev1.Node
	namespaces     map[types.NamespacedName]*corev1.Namespace
	entries        map[model.WorkloadKey]*model.WorkloadInstance
	gateways       map[types.NamespacedName]*gatewayInfo
	gatewayClasses map[types.NamespacedName]*gatewayClassInfo
	exports        map[types.NamespacedName]*exportInfo
	imports        map[types.NamespacedName]*importInfo
	// mesh is the latest SetMeshNetworks, nil when none is pending.
	mesh *meshChange
	// listedServices and listedPods are the services and pods of the
	// informers' initial lists, in the order the informers delivered
	// them (see inListOrder).
	listedServices []*corev1.Service
	listedPods     []*podInfo
}

func newChanges() changes {
	return changes{
		services:       map[types.NamespacedName]*corev1.Service{},
		slices:         map[types.NamespacedName]*sliceInfo{},
		pods:           map[types.NamespacedName]*podInfo{},
		nodes:          map[types.NamespacedName]*corev1.Node{},
		namespaces:     map[types.NamespacedName]*corev1.Namespace{},
		entries:        map[model.WorkloadKey]*model.WorkloadInstance{},
		gateways:       map[types.NamespacedName]*gatewayInfo{},
		gatewayClasses: map[types.NamespacedName]*gatewayClassInfo{},
		exports:        map[types.NamespacedName]*exportInfo{},
		imports:        map[types.NamespacedName]*importInfo{},
	}
}

func (ch *changes) empty() bool {
	return ch.mesh == nil && len(ch.services)+len(ch.slices)+len(ch.pods)+len(ch.nodes)+len(ch.namespaces)+len(ch.entries)+len(ch.gateways)+len(ch.gatewayClasses)+len(ch.exports)+len(ch.imports) == 0
}

func newInbox() *inbox {
	return workqueue.New(newChanges(), (*changes).empty)
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
	ch.gatewayClasses = emptiedMap(ch.gatewayClasses)
	ch.exports = emptiedMap(ch.exports)
	ch.imports = emptiedMap(ch.imports)
	ch.mesh = nil
	ch.listedServices = emptiedSlice(ch.listedServices)
	ch.listedPods = emptiedSlice(ch.listedPods)
	return ch
}

func emptiedSlice[T any](s []T) []T {
	if cap(s) > maxReusedChanges {
		return nil
	}
	clear(s)
	return s[:0]
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
	if !c.primed {
		c.listed.services = append(c.listed.services, ch.listedServices...)
		c.listed.pods = append(c.listed.pods, ch.listedPods...)
	}
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
	for k, gc := range ch.gatewayClasses {
		c.onGatewayClass(k, gc)
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
