package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A WatchTap records the watches that a fake clientset opens on Pods and
// EndpointSlices, so that the churn stream can also be delivered to a
// system's informers as watch events without being written to the
// tracker (runDelivered). What a system does with such an event is what
// it does with a written change, less the write: the API server's work,
// which in a control plane is not in the process at all.
type WatchTap struct {
	mu       sync.Mutex
	watchers map[string][]modifier // by resource
}

// modifier is what the tracker's watchers (watch.RaceFreeFakeWatcher)
// offer to send a Modified event.
type modifier interface{ Modify(k8sruntime.Object) }

// TapWatches makes client record its Pod and EndpointSlice watches. It
// opens them as the clientset's own watch reactor does, so that written
// changes reach the watchers as before.
func TapWatches(client *fake.Clientset) *WatchTap {
	t := &WatchTap{watchers: map[string][]modifier{}}
	tracker := client.Tracker()
	for _, res := range []string{"pods", "endpointslices"} { // what the stream changes
		client.PrependWatchReactor(res, func(a k8stesting.Action) (bool, watch.Interface, error) {
			var opts metav1.ListOptions
			if wa, ok := a.(k8stesting.WatchActionImpl); ok {
				opts = wa.ListOptions
			}
			w, err := tracker.Watch(a.GetResource(), a.GetNamespace(), opts)
			if err != nil {
				return false, nil, err
			}
			if m, ok := w.(modifier); ok {
				t.mu.Lock()
				t.watchers[res] = append(t.watchers[res], m)
				t.mu.Unlock()
			}
			return true, w, nil
		})
	}
	return t
}

// Modify sends obj as a Modified event to every watch recorded on res,
// as the tracker does on an update (a stopped watcher drops it).
func (t *WatchTap) Modify(res string, obj k8sruntime.Object) error {
	t.mu.Lock()
	ws := t.watchers[res]
	t.mu.Unlock()
	if len(ws) == 0 {
		return fmt.Errorf("no watch on %s to deliver to", res)
	}
	for i, w := range ws {
		if i > 0 {
			obj = obj.DeepCopyObject()
		}
		w.Modify(obj)
	}
	return nil
}

// delivery is one change of the stream as the object to deliver.
type delivery struct {
	resource string
	obj      k8sruntime.Object
}

// deliveries builds the stream's changes as objects, each from the
// version of its object that the previous change left (the tracker's
// for the first), with a resource version above any the tracker gave.
// Each object is a copy of its own: an informer keeps what it is
// delivered. The versions are kept in w, so that a later call goes on from where
// this one left off.
func (w *writer) deliveries(ctx context.Context, stream []change) ([]delivery, error) {
	if w.delivered == nil {
		w.delivered = map[string]k8sruntime.Object{}
	}
	cur := w.delivered
	out := make([]delivery, len(stream))
	for i, c := range stream {
		w.gen++
		key := c.floorKey()
		prev, ok := cur[key]
		if !ok {
			var err error
			if c.slice {
				prev, err = w.client.DiscoveryV1().EndpointSlices(c.ns).Get(ctx, c.name, metav1.GetOptions{})
			} else {
				prev, err = w.client.CoreV1().Pods(c.ns).Get(ctx, c.name, metav1.GetOptions{})
			}
			if err != nil {
				return nil, err
			}
		}
		obj := prev.DeepCopyObject()
		res := "pods"
		if c.slice {
			res = "endpointslices"
			flipReady(obj.(*discoveryv1.EndpointSlice), c.index)
		} else {
			setGeneration(obj.(*corev1.Pod), w.gen)
		}
		w.version++
		obj.(metav1.Object).SetResourceVersion(strconv.Itoa(deliveredVersions + w.version))
		cur[key] = obj
		out[i] = delivery{resource: res, obj: obj}
	}
	return out, nil
}

// deliveredVersions is the first resource version of delivered objects:
// above any the tracker gives in a run (one per object and write).
const deliveredVersions = 1 << 40

// runDelivered delivers ds, the stream's changes built by deliveries,
// to sys's watches one at a time, each waited for as in runChurn, and
// fills res's Delivered figures.
func runDelivered(tap *WatchTap, sys system, floor bool, stream []change, ds []delivery, res *ChurnResult) error {
	seen, unsink := sinkTo(sys)
	defer unsink()
	sq, err := oneAtATime(stream, floor, seen, res, func(i int) error {
		return tap.Modify(ds[i].resource, ds[i].obj)
	})
	if err != nil {
		return err
	}
	res.DeliveredCPUPerChange, res.DeliveredSteadyCPUPerChange = sq.cpu, sq.steady
	res.DeliveredAllocsPerChange = sq.allocs
	res.DeliveredP50 = int64(percentile(sq.lat, .5))
	return nil
}
