package kube

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// LoadUnstarted hands objs to a controller that has not run, as its
// informers' initial lists would: each object through its informer's
// transform to its handler. For benchmarks of the initial conversion
// (Prime) without informers.
func LoadUnstarted(c *Controller, objs []runtime.Object) error {
	type kind struct {
		strip   cache.TransformFunc
		handler cache.ResourceEventHandler
	}
	var (
		services   = kind{stripService, handle(c, c.onService)}
		slices     = kind{stripSlice, handle(c, c.onSlice)}
		pods       = kind{stripPod, handle(c, c.onPod)}
		nodes      = kind{stripNode, handle(c, c.onNode)}
		namespaces = kind{stripNamespace, handle(c, c.onNamespace)}
	)
	for _, o := range objs {
		var k kind
		switch o.(type) {
		case *corev1.Service:
			k = services
		case *discoveryv1.EndpointSlice:
			k = slices
		case *corev1.Pod:
			k = pods
		case *corev1.Node:
			k = nodes
		case *corev1.Namespace:
			k = namespaces
		default:
			continue
		}
		s, err := k.strip(o)
		if err != nil {
			return err
		}
		k.handler.OnAdd(s, true)
	}
	return nil
}

// Prime runs the initial conversion of what LoadUnstarted loaded, as Run
// does once the informers have synced, up to marking the registry
// synced, and returns the number of conversions. What Run does next
// (the index of dependencies) is left to finish.
func Prime(c *Controller) (n int, finish func()) {
	c.mu.Lock()
	n = c.primeLocked()
	c.store.MarkSynced()
	return n, func() {
		c.objs.indexDeps()
		c.mu.Unlock()
	}
}
