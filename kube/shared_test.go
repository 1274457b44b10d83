package kube

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/aggregate"
)

// counted is a shared informer that counts the handlers added to it and
// not removed. With gate set, each handler's events after its first wait
// until gate is closed.
type counted struct {
	cache.SharedIndexInformer
	gate chan struct{}
	mu   sync.Mutex
	regs map[cache.ResourceEventHandlerRegistration]bool
	// delivered counts the events handed to the handlers.
	delivered atomic.Int32
}

// gated hands its events on, each after the first once gate is closed.
type gated struct {
	c *counted
	h cache.ResourceEventHandler
}

func (g gated) wait() {
	if g.c.delivered.Add(1) > 1 && g.c.gate != nil {
		<-g.c.gate
	}
}
func (g gated) OnAdd(obj any, initial bool) { g.wait(); g.h.OnAdd(obj, initial) }
func (g gated) OnUpdate(old, obj any)       { g.wait(); g.h.OnUpdate(old, obj) }
func (g gated) OnDelete(obj any)            { g.wait(); g.h.OnDelete(obj) }

func (c *counted) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	reg, err := c.SharedIndexInformer.AddEventHandler(gated{c: c, h: h})
	if err == nil {
		c.mu.Lock()
		c.regs[reg] = true
		c.mu.Unlock()
	}
	return reg, err
}

func (c *counted) RemoveEventHandler(reg cache.ResourceEventHandlerRegistration) error {
	c.mu.Lock()
	delete(c.regs, reg)
	c.mu.Unlock()
	return c.SharedIndexInformer.RemoveEventHandler(reg)
}

func (c *counted) handlers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.regs)
}

// countedInformers wraps a factory's five informers.
func countedInformers(f informers.SharedInformerFactory) (*SharedInformers, []*counted) {
	fi := FactoryInformers(f)
	var all []*counted
	wrap := func(inf SharedInformer) SharedInformer {
		c := &counted{SharedIndexInformer: inf.(cache.SharedIndexInformer), regs: map[cache.ResourceEventHandlerRegistration]bool{}}
		all = append(all, c)
		return c
	}
	return &SharedInformers{
		Services: wrap(fi.Services), EndpointSlices: wrap(fi.EndpointSlices), Pods: wrap(fi.Pods),
		Nodes: wrap(fi.Nodes), Namespaces: wrap(fi.Namespaces),
	}, all
}

func handlerCount(cs []*counted) int {
	n := 0
	for _, c := range cs {
		n += c.handlers()
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
	pods := counts[2]
	pods.gate = make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(pods.gate) }) }
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
