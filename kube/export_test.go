package kube

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// LoadUnstarted hands objs to a controller that has not run, as its
// informers' initial lists would, each object through its informer's
// transform, and applies them as the worker does before the initial
// conversion. For benchmarks of the initial conversion (Prime) without
// informers.
func LoadUnstarted(c *Controller, objs []runtime.Object) error {
	for _, o := range objs {
		m, ok := o.(interface {
			GetNamespace() string
			GetName() string
		})
		if !ok {
			continue
		}
		key := types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
		var put func(ch *changes)
		switch o := o.(type) {
		case *corev1.Service:
			s, _ := stripService(o)
			put = func(ch *changes) {
				ch.services[key] = s.(*corev1.Service)
				ch.listedServices = append(ch.listedServices, s.(*corev1.Service))
			}
		case *discoveryv1.EndpointSlice:
			put = func(ch *changes) { ch.slices[key] = newSliceInfo(o) }
		case *corev1.Pod:
			pod := newPodInfo(o, nil)
			put = func(ch *changes) {
				ch.pods[key] = pod
				ch.listedPods = append(ch.listedPods, pod)
			}
		case *corev1.Node:
			n, _ := stripNode(o)
			put = func(ch *changes) { ch.nodes[key] = n.(*corev1.Node) }
		case *corev1.Namespace:
			n, _ := stripNamespace(o)
			put = func(ch *changes) { ch.namespaces[key] = n.(*corev1.Namespace) }
		default:
			continue
		}
		c.in.Add(put)
	}
	c.apply(c.in.Take(c.spare))
	c.in.Done()
	return nil
}

// Prime runs the initial conversion of what LoadUnstarted loaded, as Run
// does once the informers have synced, up to marking the registry
// synced, and returns the number of conversions; finish does what is
// left (nothing, today).
func Prime(c *Controller) (n int, finish func()) {
	n = c.prime()
	c.store.MarkSynced()
	return n, func() {}
}
