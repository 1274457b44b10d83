package metrics_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/internal/metrics"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// value returns the value of the one series of a metric whose labels
// include want, or -1 when there is none.
func value(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metric
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return -1
}

// eventually polls cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // a pause between polls
	}
}

func TestOff(t *testing.T) {
	m, err := metrics.New(nil, "Kubernetes", "c")
	if m != nil || err != nil {
		t.Fatalf("New(nil) = %v, %v; want nil, nil", m, err)
	}
	// Every method is a no-op on nil.
	m.Notified(registry.ServiceEvents)
	m.Waited(time.Second)
	m.Applied("Pod", time.Now())
	m.Relisted("pods")
	m.Synced(time.Second)
	m.Watch(metrics.State{})
	m.Unregister()
}

// A cluster's registry and its replacement (a kubeconfig Secret
// rotated: the new one is built while the old one serves) share the
// cluster's series on one Registerer: the counters go on, and the state
// gauges read the older until it is unregistered.
func TestOneClusterTwiceSharesTheSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	east := map[string]string{"registry": "Kubernetes", "cluster": "east"}
	relists := func() float64 { return value(t, reg, "meshreg_informer_relists_total", east) }
	services := func() float64 { return value(t, reg, "meshreg_services", east) }
	state := func(n int) metrics.State {
		mem, err := memory.New(memory.Options{ClusterID: "east"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			mem.AddService(memory.Service(fmt.Sprintf("s%d", i), "default").Port("http", 80).Build())
		}
		return metrics.State{Discovery: mem}
	}

	old, err := metrics.New(reg, "Kubernetes", "east")
	if err != nil {
		t.Fatal(err)
	}
	old.Watch(state(1))
	old.Relisted("pods")
	if _, err := metrics.New(reg, "Kubernetes", "west"); err != nil {
		t.Errorf("another cluster on the same Registerer: %v", err)
	}
	replacement, err := metrics.New(reg, "Kubernetes", "east")
	if err != nil {
		t.Fatalf("the same cluster again, while the first is registered: %v", err)
	}
	replacement.Watch(state(2))
	replacement.Relisted("pods")
	if got := relists(); got != 2 {
		t.Errorf("relists of both = %v, want 2 in one series", got)
	}
	if got := services(); got != 1 {
		t.Errorf("services while both are registered = %v, want 1, the older one's", got)
	}
	old.Unregister()
	old.Unregister() // a second call does nothing
	if got, want := [2]float64{relists(), services()}, [2]float64{2, 2}; got != want {
		t.Errorf("after the old one left: relists, services = %v, want %v", got, want)
	}
	replacement.Unregister()
	if got := services(); got != -1 {
		t.Errorf("services after both left = %v, want no series", got)
	}
	again, err := metrics.New(reg, "Kubernetes", "east")
	if err != nil {
		t.Fatal(err)
	}
	again.Relisted("pods")
	if got := relists(); got != 1 {
		t.Errorf("relists after a new start and one relist = %v, want 1", got)
	}
	again.Unregister()
}

func TestNamesTakenByAnotherCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "meshreg_events_published_total", Help: "someone else's", ConstLabels: prometheus.Labels{"registry": "Kubernetes", "cluster": "east"},
	}))
	if m, err := metrics.New(reg, "Kubernetes", "east"); err == nil {
		m.Unregister()
		t.Fatal("New over another collector's names succeeded, want an error")
	}
}

// Registries of one cluster come and go concurrently; when all have
// gone, nothing is left registered.
func TestSharedSeriesConcurrently(t *testing.T) {
	reg := prometheus.NewRegistry()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				m, err := metrics.New(reg, "Kubernetes", "east")
				if err != nil {
					t.Error(err)
					return
				}
				mem, err := memory.New(memory.Options{})
				if err != nil {
					t.Error(err)
					return
				}
				m.Watch(metrics.State{Discovery: mem})
				m.Relisted("pods")
				if _, err := reg.Gather(); err != nil {
					t.Error(err)
				}
				m.Unregister()
			}
		})
	}
	wg.Wait()
	if fams, err := reg.Gather(); err != nil || len(fams) != 0 {
		t.Errorf("after every registry left: %d families (%v), want none", len(fams), err)
	}
}

// TestMemoryRegistryMetrics follows a scripted sequence on the in-memory
// registry: sizes and events as it changes, a diagnostic added and
// cleared, and a subscriber blocked so that its queue grows and drains.
func TestMemoryRegistryMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	mem, err := memory.New(memory.Options{ClusterID: "c1", Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	l := map[string]string{"registry": "Kubernetes", "cluster": "c1"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mem.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, "the initial sync", mem.HasSynced)

	svc := memory.Service("reviews", "default").Port("http", 80).Build()
	mem.AddService(svc)
	mem.SetEndpoints(svc.Key(), memory.Endpoint("10.0.0.1", 8080).Port("http").Build(), memory.Endpoint("10.0.0.2", 8080).Port("http").Build())
	for name, want := range map[string]float64{"meshreg_services": 1, "meshreg_endpoints": 2, "meshreg_workloads": 0} {
		if got := value(t, reg, name, l); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := value(t, reg, "meshreg_events_published_total", map[string]string{"kind": "service"}); got != 1 {
		t.Errorf("service events = %v, want 1", got)
	}
	if got := value(t, reg, "meshreg_events_published_total", map[string]string{"kind": "endpoints"}); got != 1 {
		t.Errorf("endpoints events = %v, want 1", got)
	}

	mem.AddDiagnostic(model.Diagnostic{Severity: model.Error, Kind: "Service", Namespace: "default", Name: "x", Message: "bad"})
	if got := value(t, reg, "meshreg_diagnostics", map[string]string{"severity": "Error", "kind": "Service"}); got != 1 {
		t.Errorf("error diagnostics = %v, want 1", got)
	}
	mem.ClearDiagnostics()
	if got := value(t, reg, "meshreg_diagnostics", map[string]string{"severity": "Error"}); got != -1 {
		t.Errorf("error diagnostics after the fix = %v, want no series", got)
	}

	// A subscriber whose handler blocks: its queue grows, and the events
	// drain once it is released.
	release := make(chan struct{})
	var once sync.Once
	unsubscribe := mem.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(registry.EndpointsEvent) { <-release }})
	defer unsubscribe()
	for i := range 5 {
		mem.SetEndpoints(svc.Key(), memory.Endpoint(fmt.Sprintf("10.0.1.%d", i), 8080).Port("http").Build())
	}
	depth := func() float64 { return value(t, reg, "meshreg_subscriber_queue_depth", nil) }
	if d := depth(); d != 6 { // the initial endpoints event, blocked in the handler, and five more
		t.Errorf("queue depth with the handler blocked = %v, want 6", d)
	}
	once.Do(func() { close(release) })
	eventually(t, "the queue to drain", func() bool { return depth() == 0 })
	if got := value(t, reg, "meshreg_event_wait_seconds", l); got < 6 {
		t.Errorf("events timed waiting = %v, want at least the 6 the blocked subscriber received", got)
	}
	if got := value(t, reg, "meshreg_initial_sync_seconds", l); got < 0 {
		t.Errorf("initial sync = %v, want a value", got)
	}
}

// TestKubeMetrics follows a scripted sequence on kube over the fake
// clientset: an endpoint pending its pod, released when the pod comes;
// the lag of changes (from their objects' managed fields); and, when Run
// returns, the metrics unregistered.
func TestKubeMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	written := metav1.NewTime(time.Now().Add(-2 * time.Second))
	managed := []metav1.ManagedFieldsEntry{{Manager: "test", Operation: metav1.ManagedFieldsOperationUpdate, Time: &written}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ManagedFields: managed},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", ManagedFields: managed,
			Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0"}}},
	}
	client := fake.NewClientset(svc, slice)
	kc, err := kube.New(client, kube.Options{ClusterID: "c1", Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- kc.Run(ctx) }()
	l := map[string]string{"registry": "Kubernetes", "cluster": "c1"}
	eventually(t, "the initial sync", kc.HasSynced)
	if got := value(t, reg, "meshreg_endpoints_pending", l); got != 1 {
		t.Errorf("pending endpoints = %v, want 1 (its pod is not known)", got)
	}
	if got := value(t, reg, "meshreg_change_lag_seconds", map[string]string{"kind": "Service"}); got != 1 {
		t.Errorf("Service changes timed = %v, want 1", got)
	}
	if got := value(t, reg, "meshreg_change_lag_seconds", map[string]string{"kind": "EndpointSlice"}); got != 1 {
		t.Errorf("EndpointSlice changes timed = %v, want 1", got)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pending endpoint released", func() bool { return value(t, reg, "meshreg_endpoints_pending", l) == 0 })
	eventually(t, "the endpoint", func() bool { return value(t, reg, "meshreg_endpoints", l) == 1 })
	// The fake clientset, like the API server, records managed fields on
	// a create.
	if got := value(t, reg, "meshreg_change_lag_seconds", map[string]string{"kind": "Pod"}); got < 1 {
		t.Errorf("Pod changes timed = %v, want the pod's", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fams, _ := reg.Gather(); len(fams) != 0 {
		names := []string{}
		for _, f := range fams {
			names = append(names, f.GetName())
		}
		sort.Strings(names)
		t.Errorf("metrics still registered after Run returned: %v", names)
	}
}

func ptr[T any](v T) *T { return &v }

// A cluster's kube controller replaced by a new one of the same cluster
// and Registerer, as multicluster does when a cluster's kubeconfig
// Secret changes: the new one is built while the old one runs, and the
// cluster's gauges move to it when the old one stops.
func TestKubeControllerReplacedWithMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	l := map[string]string{"registry": "Kubernetes", "cluster": "c1"}
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	}
	start := func(objs ...runtime.Object) (*kube.Controller, func()) {
		c, err := kube.New(fake.NewClientset(objs...), kube.Options{ClusterID: "c1", Metrics: reg})
		if err != nil {
			t.Fatalf("kube.New for cluster c1, with c1's metrics registered: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		eventually(t, "the initial sync", c.HasSynced)
		return c, func() { cancel(); <-done }
	}
	_, stopOld := start(svc("a"))
	_, stopNew := start(svc("a"), svc("b"))
	defer stopNew()
	if got := value(t, reg, "meshreg_services", l); got != 1 {
		t.Errorf("services while both run = %v, want 1, the old controller's", got)
	}
	stopOld()
	if got := value(t, reg, "meshreg_services", l); got != 2 {
		t.Errorf("services after the old controller stopped = %v, want 2, the new one's", got)
	}
}
