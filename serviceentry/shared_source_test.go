package serviceentry

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/informertest"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/registry"
)

// A source over a control plane's istio informer factory gives the
// registry the same state as a source of its own informers, adds one
// handler to each informer while it runs and none after, and leaves the
// factory's objects as the API has them.
func TestSharedInformerSource(t *testing.T) {
	yaml := selSE + "---\n" + otherSE + "---\n" + we("w1", "ns", "a", "10.0.0.1") + "---\n" + we("w2", "ns", "b", "10.0.0.2")
	// dumpOf runs a controller over src until synced, calls during
	// while it runs, and returns its dump once it has stopped.
	dumpOf := func(src Source, during func()) []byte {
		c, err := New(src, Options{ClusterID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		eventually(t, c.HasSynced)
		during()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := registry.WriteJSON(&out, c); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	own, err := NewInformerSource(manifest.IstioClientset(load(t, yaml)), InformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := dumpOf(own, func() {})

	client := manifest.IstioClientset(load(t, yaml))
	factory := manifest.IstioInformerFactory(client)
	var counts []*informertest.Counting
	for _, inf := range []cache.SharedIndexInformer{
		factory.Networking().V1().ServiceEntries().Informer(),
		factory.Networking().V1().WorkloadEntries().Informer(),
	} {
		counts = append(counts, informertest.NewCounting(inf))
	}
	src, err := NewSharedInformerSource(factory, SharedInformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range src.kinds { // count the handlers through the wrappers
		for _, c := range counts {
			if src.kinds[i].inf == c.SharedIndexInformer {
				src.kinds[i].inf = c
			}
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())

	got := dumpOf(src, func() {
		if counts[0].Handlers() != 1 || counts[1].Handlers() != 1 {
			t.Errorf("%d and %d of the source's handlers on the informers while it runs, want 1 and 1", counts[0].Handlers(), counts[1].Handlers())
		}
	})
	if !bytes.Equal(got, want) {
		t.Errorf("shared source dumps:\n%s\nwant (the source's own informers):\n%s", got, want)
	}
	if !bytes.Contains(got, []byte("10.0.0.1")) {
		t.Fatalf("no workload in the dump:\n%s", got)
	}
	for i, c := range counts {
		if n := c.Handlers(); n != 0 {
			t.Errorf("informer %d keeps %d of the source's handlers after Run returned", i, n)
		}
	}
	for _, o := range factory.Networking().V1().WorkloadEntries().Informer().GetStore().List() {
		cached := o.(*networkingv1.WorkloadEntry)
		api, err := client.NetworkingV1().WorkloadEntries(cached.Namespace).Get(ctx, cached.Name, metav1.GetOptions{})
		if err != nil || !equality.Semantic.DeepEqual(cached.ObjectMeta, api.ObjectMeta) || !proto.Equal(&cached.Spec, &api.Spec) {
			t.Errorf("WorkloadEntry %s/%s of the shared cache differs from the API's (%v)", cached.Namespace, cached.Name, err)
		}
	}
	for _, o := range factory.Networking().V1().ServiceEntries().Informer().GetStore().List() {
		cached := o.(*networkingv1.ServiceEntry)
		api, err := client.NetworkingV1().ServiceEntries(cached.Namespace).Get(ctx, cached.Name, metav1.GetOptions{})
		if err != nil || !equality.Semantic.DeepEqual(cached.ObjectMeta, api.ObjectMeta) || !proto.Equal(&cached.Spec, &api.Spec) {
			t.Errorf("ServiceEntry %s/%s of the shared cache differs from the API's (%v)", cached.Namespace, cached.Name, err)
		}
	}
	if _, err := NewSharedInformerSource(nil, SharedInformerOptions{}); err == nil {
		t.Error("a nil factory was accepted")
	}
}
