package kube

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// primeCluster returns the objects of a cluster large enough for the
// initial conversion to use several workers (see minPerWorker),
// with every kind of endpoint the conversion tells apart: by pod
// targetRef, by address alone (the pod holding it gives the metadata),
// pending (targetRef pod unknown), slices without their service, and a
// namespace the selector leaves out.
func primeCluster() []runtime.Object {
	objs := []runtime.Object{
		nsObj("a", map[string]string{"mesh": "on"}),
		nsObj("b", map[string]string{"mesh": "on"}),
		nsObj("off", nil),
		nodeObj("n1", "r", "z1"), nodeObj("n2", "r", "z2"),
	}
	for i := range 400 {
		ns := []string{"a", "b", "off"}[i%3]
		name := fmt.Sprintf("svc-%03d", i)
		ip := func(j int) string { return fmt.Sprintf("10.%d.%d.%d", 1+i/200, i%200, j+1) }
		node := []string{"n1", "n2"}[i%2]
		var eps []sliceEP
		for j := range 3 {
			pod := fmt.Sprintf("%s-%d", name, j)
			objs = append(objs, podObj(ns, pod, ip(j), node, map[string]string{"app": name, "j": fmt.Sprint(j)}))
			switch {
			case i%5 == 1 && j == 0:
				eps = append(eps, sliceEP{addr: ip(j), ready: true}) // by address
			case i%5 == 2 && j == 0:
				eps = append(eps, sliceEP{addr: "10.250.0.1", pod: "missing", ready: true}) // pending
			default:
				eps = append(eps, sliceEP{addr: ip(j), pod: pod, ready: j != 2})
			}
		}
		if i%5 != 3 { // slices without their service
			objs = append(objs, svcObj(ns, name, fmt.Sprintf("10.96.%d.%d", i/200, i%200+1), map[string]string{"app": name}, svcPort("http", 80)))
		}
		objs = append(objs, sliceObj(ns, name+"-x", name, discoveryv1.AddressTypeIPv4, 8080, eps...))
	}
	return objs
}

// TestPrimeWorkers checks the initial conversion: with several workers it
// yields the registry it yields on one goroutine, and both are the
// registry a controller builds from the same objects arriving one by one
// after its start.
func TestPrimeWorkers(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}
	serial := dump(t, startController(t, newFakeCluster(primeCluster()...), Options{NamespaceSelector: sel, InitialSyncWorkers: 1}))
	parallel := dump(t, startController(t, newFakeCluster(primeCluster()...), Options{NamespaceSelector: sel, InitialSyncWorkers: 4}))
	if parallel != serial {
		t.Errorf("dump with 4 initial workers differs from the dump with 1 (-1 +4):\n%s", cmp.Diff(serial, parallel))
	}

	// What the workers recorded of each service's dependencies serves
	// the changes after the start: pods relabelled, the pending pods'
	// arrival. The registry then matches a fresh controller's over the
	// changed objects.
	f := newFakeCluster(primeCluster()...)
	c := startController(t, f, Options{NamespaceSelector: sel, InitialSyncWorkers: 4})
	changed := primeCluster()
	for _, ns := range []string{"a", "b"} {
		missing := podObj(ns, "missing", "10.250.0.1", "n1", map[string]string{"arrived": "yes"})
		_, err := f.CoreV1().Pods(ns).Create(context.Background(), missing, metav1.CreateOptions{})
		mustNot(t, err)
		changed = append(changed, missing)
	}
	for _, o := range changed {
		if p, ok := o.(*corev1.Pod); ok && p.Labels["j"] == "1" && len(p.Name)%2 == 0 {
			p.Labels["changed"] = "yes"
			_, err := f.CoreV1().Pods(p.Namespace).Update(context.Background(), p, metav1.UpdateOptions{})
			mustNot(t, err)
		}
	}
	want := dump(t, startController(t, newFakeCluster(changed...), Options{NamespaceSelector: sel, InitialSyncWorkers: 1}))
	waitDump(t, c, want, "after changes, the registry primed by 4 workers (want: a fresh one's)")

	f = newFakeCluster()
	c = startController(t, f, Options{NamespaceSelector: sel})
	// The fake's watch channels hold 100 events: each batch of writes
	// waits until the informers hold what it wrote.
	const batch = 25
	var written []metav1.Object
	inCache := func() bool {
		for _, o := range written {
			var name string
			switch o.(type) {
			case *corev1.Namespace:
				name = "namespaces"
			case *corev1.Node:
				name = "nodes"
			case *corev1.Pod:
				name = "pods"
			case *corev1.Service:
				name = "services"
			case *discoveryv1.EndpointSlice:
				name = "endpointslices"
			}
			i := slices.IndexFunc(c.informers, func(in informer) bool { return in.name == name })
			inf := c.informers[i]
			key := o.GetName()
			if o.GetNamespace() != "" {
				key = o.GetNamespace() + "/" + key
			}
			if _, ok, _ := inf.store.GetByKey(key); !ok {
				return false
			}
		}
		return true
	}
	for i, o := range primeCluster() {
		if i%batch == 0 {
			waitFor(t, "the informers to hold the objects written", inCache)
			written = written[:0]
		}
		written = append(written, o.(metav1.Object))
		create(o)(t, f)
	}
	waitDump(t, c, serial, "the registry built object by object (want: the primed one)")
}

// primeClusterSplit returns primeCluster's objects in two parts: the
// pods, and what comes before them in a large cluster.
func primeClusterSplit() (early, pods []runtime.Object) {
	for _, o := range primeCluster() {
		if _, ok := o.(*corev1.Pod); ok {
			pods = append(pods, o)
		} else {
			early = append(early, o)
		}
	}
	return early, pods
}

// TestPrepareBeforePods checks the work the controller does while the
// pods' list is still coming (prepareLocked): the registry it then primes
// is the one a controller primes without it, when services change,
// appear and go in between, on one goroutine and on several.
func TestPrepareBeforePods(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}
	early, pods := primeClusterSplit()
	// The changes that arrive after the preparation: a new port and VIP
	// for some services, one service gone, one new.
	var changed, gone []*corev1.Service
	for _, o := range early {
		svc, ok := o.(*corev1.Service)
		if !ok {
			continue
		}
		switch {
		case len(gone) == 0 && svc.Namespace == "a":
			gone = append(gone, svc)
		case len(changed) < 20 && svc.Namespace != "off":
			c := svc.DeepCopy()
			c.Spec.Ports = []corev1.ServicePort{svcPort("grpc", 9090)}
			c.Spec.ClusterIP = fmt.Sprintf("10.97.0.%d", len(changed)+1)
			changed = append(changed, c)
		}
	}
	added := svcObj("b", "svc-new", "10.98.0.1", map[string]string{"app": "svc-001"}, svcPort("http", 80))

	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint(workers, " workers"), func(t *testing.T) {
			opts := Options{NamespaceSelector: sel, InitialSyncWorkers: workers}
			prime := func(c *Controller) string {
				_, finish := Prime(c)
				defer finish()
				return dump(t, c)
			}

			// Without the preparation, over the final objects.
			final := slices.Clone(early)
			final = slices.DeleteFunc(final, func(o runtime.Object) bool {
				svc, ok := o.(*corev1.Service)
				return ok && svc == gone[0]
			})
			for _, c := range changed {
				final = append(final, c) // replaces the first: same name
			}
			final = append(final, added)
			final = append(final, pods...)
			fresh, err := New(newFakeCluster(), opts)
			mustNot(t, err)
			mustNot(t, LoadUnstarted(fresh, final))
			want := prime(fresh)

			c, err := New(newFakeCluster(), opts)
			mustNot(t, err)
			mustNot(t, LoadUnstarted(c, early))
			c.prepare()
			if services := len(c.cl.services); services == 0 || len(c.svcs) != services {
				t.Fatalf("after the preparation: %d conversions; want the %d services", len(c.svcs), services)
			}
			mustNot(t, LoadUnstarted(c, changedObjects(changed, added)))
			c.onService(types.NamespacedName{Namespace: gone[0].Namespace, Name: gone[0].Name}, nil)
			mustNot(t, LoadUnstarted(c, pods))
			if got := prime(c); got != want {
				t.Errorf("registry primed after the preparation differs from one primed without it (-without +with):\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// changedObjects lists services as objects.
func changedObjects(svcs []*corev1.Service, more ...*corev1.Service) []runtime.Object {
	var out []runtime.Object
	for _, s := range append(slices.Clone(svcs), more...) {
		out = append(out, s)
	}
	return out
}

// stubSync is an informer controller that has synced when told.
type stubSync struct {
	cache.Controller
	synced atomic.Bool
}

func (s *stubSync) HasSynced() bool { return s.synced.Load() }

// TestStepPrepares: before the initial conversion, a step only applies
// what came, and prepares once the services' and the slices' lists are
// in while the pods' is not; the step that finds every list in primes.
func TestStepPrepares(t *testing.T) {
	early, pods := primeClusterSplit()
	c, err := New(newFakeCluster(), Options{})
	mustNot(t, err)
	stubs := map[string]*stubSync{}
	for i := range c.informers {
		s := &stubSync{}
		stubs[c.informers[i].name] = s
		c.informers[i].ctrl = s
	}
	mustNot(t, LoadUnstarted(c, early))
	stubs["services"].synced.Store(true)
	stubs["nodes"].synced.Store(true)
	c.step()
	if c.primed || c.prepared {
		t.Fatal("prepared or primed before the slices' list was in")
	}
	stubs["endpointslices"].synced.Store(true)
	c.step()
	if c.primed || !c.prepared {
		t.Fatal("not prepared with the services' and slices' lists in, or primed with the pods' not in")
	}
	mustNot(t, LoadUnstarted(c, pods))
	stubs["pods"].synced.Store(true)
	stubs["namespaces"].synced.Store(true)
	c.step()
	if !c.primed || !c.HasSynced() {
		t.Error("not primed and synced with every list in")
	}
}

// inListOrder keeps the initial lists' order for the objects still
// current, skips those replaced or deleted since, and adds those that
// came after the lists.
func TestInListOrder(t *testing.T) {
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	a, b, c, bNew, d := svc("a"), svc("b"), svc("c"), svc("b"), svc("d")
	current := map[types.NamespacedName]*corev1.Service{}
	for _, s := range []*corev1.Service{c, a, bNew, d} { // c deleted below
		current[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	delete(current, types.NamespacedName{Namespace: "ns", Name: "c"})
	got := inListOrder([]*corev1.Service{c, b, a}, current)
	// a is listed and current; b was replaced by bNew, and d came after
	// the lists: both follow, in either order.
	if len(got) != 3 || got[0] != a || !(got[1] == bNew && got[2] == d || got[1] == d && got[2] == bNew) {
		names := make([]string, len(got))
		for i, s := range got {
			names[i] = s.Name
		}
		t.Errorf("inListOrder = %v, want a, then b's new version and d", names)
	}
	if got := inListOrder([]*corev1.Service{a, bNew, d}, current); len(got) != 3 || got[0] != a || got[1] != bNew || got[2] != d {
		t.Error("every object listed and current: not in list order")
	}
}
