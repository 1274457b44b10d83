package kube

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// informerCount is the number of informers a Controller runs.
const informerCount = 5

// fakeCluster is a client-go fake clientset (the plain object tracker,
// NewSimpleClientset) with a count of the watches the informers opened.
//
// Limits of the fake, which tests must respect:
//   - it applies no defaults, validation or field management: objects are
//     stored exactly as given (no targetPort defaulting, no clusterIP
//     allocation);
//   - label and field selectors are ignored on watch;
//   - between an informer's list and its watch, the tracker replays
//     objects added or updated after the list, but a delete in that gap
//     is lost (older client-go fakes lost every event there). Tests
//     therefore change objects only after waitWatching.
type fakeCluster struct {
	*fake.Clientset
	watches atomic.Int32
}

func newFakeCluster(objs ...runtime.Object) *fakeCluster {
	f := &fakeCluster{Clientset: fake.NewSimpleClientset(objs...)}
	tracker := f.Tracker()
	f.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts []metav1.ListOptions
		if wa, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = append(opts, wa.ListOptions)
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts...)
		if err != nil {
			return false, nil, err
		}
		f.watches.Add(1)
		return true, w, nil
	})
	return f
}

// startController runs a controller over the cluster until the test ends,
// and waits until it has synced and every informer is watching.
func startController(t *testing.T, f *fakeCluster, opts Options) *Controller {
	t.Helper()
	c, err := New(f, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "controller synced", c.HasSynced)
	waitFor(t, "informers watching", func() bool { return f.watches.Load() >= informerCount })
	return c
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitDump waits until d's dump is want, failing the test after a
// deadline with the difference (-want +got); what says what d is.
func waitDump(t *testing.T, d registry.Discovery, want, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := dump(t, d); got != want; got = dump(t, d) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not converge (-want +got):\n%s", what, cmp.Diff(want, got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dump renders the registry dump of d.
func dump(t *testing.T, d registry.Discovery) string {
	t.Helper()
	var buf bytes.Buffer
	if err := registry.WriteJSON(&buf, d); err != nil {
		t.Fatalf("dump: %v", err)
	}
	return buf.String()
}

// recorder is a registry.Handler that records every event.
type recorder struct {
	mu     sync.Mutex
	events []registry.Event
}

func (r *recorder) add(e registry.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) OnService(e registry.ServiceEvent)     { r.add(e) }
func (r *recorder) OnEndpoints(e registry.EndpointsEvent) { r.add(e) }
func (r *recorder) OnWorkload(e registry.WorkloadEvent)   { r.add(e) }

// take returns the events recorded so far and forgets them.
func (r *recorder) take() []registry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// waitEndpoints waits for an endpoints event of the service matching
// want, and returns it; events before it are dropped.
func (r *recorder) waitEndpoints(t *testing.T, host model.Hostname, want func([]*model.Endpoint) bool) registry.EndpointsEvent {
	t.Helper()
	var got registry.EndpointsEvent
	waitFor(t, "endpoints event for "+string(host), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, e := range r.events {
			if ee, ok := e.(registry.EndpointsEvent); ok && ee.Service.Hostname == host && want(ee.Endpoints) {
				got = ee
				r.events = r.events[i+1:]
				return true
			}
		}
		return false
	})
	return got
}

// noEventsFor asserts that no event about the host was recorded.
func (r *recorder) noEventsFor(t *testing.T, host model.Hostname) {
	t.Helper()
	for _, e := range r.take() {
		switch ev := e.(type) {
		case registry.EndpointsEvent:
			if ev.Service.Hostname == host {
				t.Errorf("unexpected endpoints event for %s: %d endpoints", host, len(ev.Endpoints))
			}
		case registry.ServiceEvent:
			if ev.Service().Hostname == host {
				t.Errorf("unexpected %v service event for %s", ev.Type, host)
			}
		}
	}
}

// Object builders for tests.

var ctx = context.Background()

func meta(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
}

func svcObj(ns, name, clusterIP string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta(ns, name, nil),
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP, Selector: selector, Ports: ports},
	}
}

func svcPort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
}

// podObj is a running, Ready pod.
func podObj(ns, name, ip, node string, labels map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: meta(ns, name, labels),
		Spec:       corev1.PodSpec{NodeName: node, ServiceAccountName: "sa-" + name},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if ip != "" {
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	return p
}

func nodeObj(name, region, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelRegion: region, labelZone: zone}}}
}

func nsObj(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// sliceEP is a slice endpoint: an address, its targetRef pod ("" for
// none) and readiness. Its conditions are those Kubernetes' EndpointSlice
// controller writes for a pod that is not terminating: ready and serving
// as given, terminating false.
type sliceEP struct {
	addr, pod string
	ready     bool
}

func sliceObj(ns, name, service string, family discoveryv1.AddressType, port int32, eps ...sliceEP) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  meta(ns, name, map[string]string{discoveryv1.LabelServiceName: service}),
		AddressType: family,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(port)}},
	}
	for _, e := range eps {
		ep := discoveryv1.Endpoint{Addresses: []string{e.addr},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(e.ready), Serving: ptr(e.ready), Terminating: ptr(false)}}
		if e.pod != "" {
			ep.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: e.pod}
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func host(ns, name string) model.Hostname {
	return model.KubeServiceHostname(name, ns, "cluster.local")
}

func skey(ns, name string) model.ServiceKey {
	return model.ServiceKey{Namespace: ns, Hostname: host(ns, name)}
}

// mustNot fails on err.
func mustNot(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mergeAPISlices is mergeSlices over API slices, through the informer
// transform.
func mergeAPISlices(in []*discoveryv1.EndpointSlice, cluster model.ClusterID) ([]sliceEndpoint, []model.Diagnostic) {
	infos := make([]*sliceInfo, len(in))
	for i, s := range in {
		infos[i] = newSliceInfo(s)
	}
	return mergeSlices(infos, cluster)
}

// worldObjects returns copies of a random test's objects, by key: what a
// fresh controller is built from.
func worldObjects(world map[string]runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, k := range slices.Sorted(maps.Keys(world)) {
		out = append(out, world[k].DeepCopyObject())
	}
	return out
}
