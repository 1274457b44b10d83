package serviceentry

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
)

// crdInformer is the informer of one Istio kind of an InformerSource,
// which with InformerOptions.CRDPollInterval starts only once the cluster
// serves the kind. Run's goroutine starts it; HasSynced reads it from any
// goroutine.
type crdInformer struct {
	resource string // "workloadentries", "serviceentries"
	kind     Kind
	inf      cache.SharedIndexInformer
	// asked is set once Run has asked whether the cluster serves the
	// kind; late, when it did not, so that the kind counts as synced
	// (with no objects) whatever comes after; started, once the informer
	// runs.
	asked, late, started atomic.Bool
}

// start runs the informer on wg until ctx is done.
func (k *crdInformer) start(ctx context.Context, wg *sync.WaitGroup) {
	k.started.Store(true)
	wg.Go(func() { k.inf.RunWithContext(ctx) })
}

// synced reports whether the kind has listed to the source's handler,
// whose registration is reg; when the source asks for CRDs (polled), a
// kind not served when first asked counts as listed.
func (k *crdInformer) synced(polled bool, reg cache.ResourceEventHandlerRegistration) bool {
	if !polled {
		return reg.HasSynced()
	}
	return k.asked.Load() && (k.late.Load() || reg.HasSynced())
}

// startServed asks the cluster which Istio kinds it serves and starts the
// informers of those served and not started yet. It reports whether a
// kind is still waiting for its CRD.
func (s *InformerSource) startServed(ctx context.Context, wg *sync.WaitGroup) (waiting bool) {
	served, err := servedResources(ctx, s.discovery, istioGroupVersion)
	for _, k := range s.crds {
		switch {
		case k.started.Load():
		case err != nil || slices.Contains(served, k.resource):
			// A failed request says nothing of the CRD: watch it, and
			// let the informer wait for the cluster.
			k.start(ctx, wg)
		default:
			if !k.asked.Load() {
				k.late.Store(true)
			}
			waiting = true
		}
		k.asked.Store(true)
	}
	return waiting
}

// servedResources returns the resources a cluster serves in a group
// version: none, without error, when it does not serve the group
// version at all. The request ends with ctx, so that Run returns when
// ctx is done even if a remote cluster does not answer (a discovery
// client without context support, such as client-go's fake, is asked
// without it).
func servedResources(ctx context.Context, d discovery.DiscoveryInterface, groupVersion string) ([]string, error) {
	list, err := discovery.ToServerResourcesInterfaceWithContext(d).ServerResourcesForGroupVersionWithContext(ctx, groupVersion)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return resourceNames(list), nil
}

func resourceNames(list *metav1.APIResourceList) []string {
	out := make([]string, 0, len(list.APIResources))
	for _, r := range list.APIResources {
		out = append(out, r.Name)
	}
	return out
}
