package kube

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/informertest"
)

// gate holds a handler's events back, each after the first, until it
// is opened; it counts the events handed to it.
type gate struct {
	open      chan struct{}
	delivered atomic.Int32
}

// gated hands its events on through g.
type gated struct {
	g *gate
	h cache.ResourceEventHandler
}

func (g gated) wait() {
	if g.g.delivered.Add(1) > 1 {
		<-g.g.open
	}
}
func (g gated) OnAdd(obj any, initial bool) { g.wait(); g.h.OnAdd(obj, initial) }
func (g gated) OnUpdate(old, obj any)       { g.wait(); g.h.OnUpdate(old, obj) }
func (g gated) OnDelete(obj any)            { g.wait(); g.h.OnDelete(obj) }

// countedInformers wraps a factory's five informers.
func countedInformers(f informers.SharedInformerFactory) (*SharedInformers, []*informertest.Counting) {
	fi := FactoryInformers(f)
	var all []*informertest.Counting
	wrap := func(inf SharedInformer) SharedInformer {
		c := informertest.NewCounting(inf.(cache.SharedIndexInformer))
		all = append(all, c)
		return c
	}
	return &SharedInformers{
		Services: wrap(fi.Services), EndpointSlices: wrap(fi.EndpointSlices), Pods: wrap(fi.Pods),
		Nodes: wrap(fi.Nodes), Namespaces: wrap(fi.Namespaces),
	}, all
}

func handlerCount(cs []*informertest.Counting) int {
	n := 0
	for _, c := range cs {
		n += c.Handlers()
	}
	return n
}

// A controller on shared informers adds one handler to each while it
// runs and removes them when Run returns; replaced through the
// aggregate, the old controller leaves no handler behind. A factory that
// synced long before the controller ran does not make the controller
// sync before its own handlers have had the initial lists.
func TestSharedInformersHandlers(t *testing.T) {
	objs := loadManifest(t, "../testdata/scenarios/kube-basic/cluster-Kubernetes.yaml")
	client := newFakeCluster(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	shared, counts := countedInformers(factory)
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	// The private controller's dump is the reference.
	own, err := New(newFakeCluster(objs...), Options{ClusterID: "Kubernetes"})
	mustNot(t, err)
	want := runUntilSynced(t, own)

	// The pods' handler gets its first pod and waits: the informer has
	// synced, the controller's handler has not.
	pods := &gate{open: make(chan struct{})}
	counts[2].Wrap = func(h cache.ResourceEventHandler) cache.ResourceEventHandler { return gated{pods, h} }
	var open sync.Once
	release := func() { open.Do(func() { close(pods.open) }) }
	defer release() // a failure below must not leave the handler waiting
	agg, err := aggregate.New(aggregate.Options{})
	mustNot(t, err)
	first, err := New(nil, Options{ClusterID: "Kubernetes", Informers: shared})
	mustNot(t, err)
	mustNot(t, agg.Add(first))
	aggCtx, stopAgg := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- agg.Run(aggCtx) }()
	waitFor(t, "the pods' handler to wait", func() bool { return pods.delivered.Load() >= 2 })
	waitFor(t, "the other kinds' lists", func() bool {
		first.in.Add(func(*changes) {}) // a step, to prime if the controller believed its lists in
		return first.in.Idle()
	})
	if first.HasSynced() {
		t.Error("synced while its pods' handler had one pod of the shared informer's list")
	}
	release()
	waitFor(t, "the first controller synced", first.HasSynced)
	if got := dump(t, first); got != want {
		t.Errorf("the controller on synced shared informers dumps:\n%s\nwant (its own informers):\n%s", got, want)
	}
	if n := handlerCount(counts); n != 5 {
		t.Errorf("%d handlers on the shared informers while one controller runs, want 5", n)
	}

	second, err := New(nil, Options{ClusterID: "Kubernetes", Informers: shared})
	mustNot(t, err)
	mustNot(t, agg.Replace(second))
	waitFor(t, "the replacement to take over", func() bool {
		regs := agg.Registries()
		return len(regs) == 1 && regs[0] == second
	})
	if n := handlerCount(counts); n != 5 {
		t.Errorf("%d handlers on the shared informers after the replacement, want the second controller's 5", n)
	}
	if got := dump(t, second); got != want {
		t.Errorf("the replacement dumps:\n%s\nwant:\n%s", got, want)
	}
	stopAgg()
	mustNot(t, <-done)
	if n := handlerCount(counts); n != 0 {
		t.Errorf("%d handlers left on the shared informers once the aggregate stopped, want 0", n)
	}
}

// runUntilSynced runs c until it has synced and returns its dump.
func runUntilSynced(t *testing.T, c *Controller) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "synced", c.HasSynced)
	return dump(t, c)
}

// Options.Informers needs every kind.
func TestSharedInformersIncomplete(t *testing.T) {
	shared := FactoryInformers(informers.NewSharedInformerFactory(newFakeCluster(), 0))
	shared.Nodes = nil
	_, err := New(nil, Options{Informers: shared})
	if err == nil || !strings.Contains(err.Error(), "Nodes") {
		t.Errorf("New with no Nodes informer = %v, want an error naming the five kinds", err)
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New with neither a client nor Options.Informers succeeded")
	}
}

// Gateways from shared Gateway API informers are the Gateways the
// controller reads with a client of its own, and it opens no watch of
// them: the client it would watch with is never given.
func TestSharedGatewayInformers(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "istio-waypoint", Labels: map[string]string{"istio.io/waypoint-for": "all"}}}
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "wp"},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "istio-waypoint", Listeners: []gatewayv1.Listener{{Name: "mesh", Port: 15008, Protocol: "HBONE"}}},
		Status:     gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Type: ptrTo(gatewayv1.IPAddressType), Value: "10.0.0.9"}}},
	}
	newGatewayClient := func() *gatewayfake.Clientset {
		gc := gatewayfake.NewSimpleClientset()
		mustNot(t, gc.Tracker().Create(gatewayv1.SchemeGroupVersion.WithResource("gatewayclasses"), class, ""))
		mustNot(t, gc.Tracker().Create(gatewayv1.SchemeGroupVersion.WithResource("gateways"), gw, "app"))
		gc.Resources = []*metav1.APIResourceList{{GroupVersion: gatewayAPIGroupVersion, APIResources: []metav1.APIResource{
			{Name: "gateways", Namespaced: true, Kind: "Gateway"}, {Name: "gatewayclasses", Kind: "GatewayClass"}}}}
		return gc
	}
	own := startController(t, newFakeCluster(ns), Options{ClusterID: "c1", GatewayClient: newGatewayClient()})
	waitFor(t, "the Gateway, read with a client", func() bool { return len(own.Gateways()) == 1 })

	gc := newGatewayClient()
	kf := informers.NewSharedInformerFactory(newFakeCluster(ns), 0)
	gf := gatewayinformers.NewSharedInformerFactory(gc, 0)
	shared := FactoryInformers(kf)
	shared.Gateways = gf.Gateway().V1().Gateways().Informer()
	shared.GatewayClasses = gf.Gateway().V1().GatewayClasses().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); kf.Shutdown(); gf.Shutdown() }()
	c, err := New(nil, Options{ClusterID: "c1", Informers: shared})
	mustNot(t, err)
	kf.Start(ctx.Done())
	gf.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); mustNot(t, <-done) }()
	waitFor(t, "the Gateway, from shared informers", func() bool { return c.HasSynced() && len(c.Gateways()) == 1 })
	if diff := cmp.Diff(own.Gateways(), c.Gateways()); diff != "" {
		t.Errorf("Gateways from shared informers (-own client +shared):\n%s", diff)
	}

	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"both sources of Gateways", Options{GatewayClient: gc, Informers: shared}, "GatewayClient"},
		{"classes without Gateways", Options{Informers: &SharedInformers{Services: shared.Services, EndpointSlices: shared.EndpointSlices,
			Pods: shared.Pods, Nodes: shared.Nodes, Namespaces: shared.Namespaces, GatewayClasses: shared.GatewayClasses}}, "GatewayClasses"},
	} {
		if _, err := New(nil, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error naming %s", tt.name, err, tt.want)
		}
	}
}
