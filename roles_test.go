package meshreg_test

import (
	"context"
	"errors"
	"testing"

	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/multicluster"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/serviceentry"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// TestWhatImplementsWhat holds the table of the registry package's doc
// to the types: each cell, yes or no.
func TestWhatImplementsWhat(t *testing.T) {
	roles := []struct {
		name string
		is   func(any) bool
	}{
		{"Reader", func(v any) bool { _, ok := v.(registry.Reader); return ok }},
		{"Registry", func(v any) bool { _, ok := v.(registry.Registry); return ok }},
		{"GatewayDiscovery", func(v any) bool { _, ok := v.(registry.GatewayDiscovery); return ok }},
		{"WorkloadHandler", func(v any) bool { _, ok := v.(registry.WorkloadHandler); return ok }},
		{"Settler", func(v any) bool { _, ok := v.(registry.Settler); return ok }},
		{"MeshNetworksHandler", func(v any) bool { _, ok := v.(registry.MeshNetworksHandler); return ok }},
	}
	for _, tt := range []struct {
		name string
		v    any
		want []bool // in the order of roles
	}{
		{"kube.Controller", (*kube.Controller)(nil), []bool{true, true, true, true, true, true}},
		{"serviceentry.Controller", (*serviceentry.Controller)(nil), []bool{true, true, false, true, true, false}},
		{"memory.Registry", (*memory.Registry)(nil), []bool{true, true, true, false, true, false}},
		{"aggregate.Controller", (*aggregate.Controller)(nil), []bool{true, false, true, false, true, false}},
	} {
		for i, r := range roles {
			if got := r.is(tt.v); got != tt.want[i] {
				t.Errorf("%s is a registry.%s: %v, the registry package's doc says %v", tt.name, r.name, got, tt.want[i])
			}
		}
	}
}

// TestRunOnce: everything that runs (registries, the aggregate, the
// multicluster controller, an informer source, the proxy view and its
// debouncer, the address index and its WDS server) runs once; a second
// Run says so with registry.ErrAlreadyRunning.
func TestRunOnce(t *testing.T) {
	kc, err := kube.New(fake.NewClientset(), kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := serviceentry.NewStaticSource()
	if err != nil {
		t.Fatal(err)
	}
	se, err := serviceentry.New(src, serviceentry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	viewed, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	view, err := proxyview.New(viewed, proxyview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deb, err := proxyview.NewDebouncer(view, func(proxyview.Push) {}, proxyview.DebounceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := address.New(viewed, address.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wds.New(idx, wds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proxies, err := xds.New(view, xds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mc, err := multicluster.New(fake.NewClientset(), agg, multicluster.Options{Factory: multicluster.ClientFactory(
		func(id model.ClusterID, c kubernetes.Interface) (registry.Registry, error) {
			return kube.New(c, kube.Options{ClusterID: id})
		})})
	if err != nil {
		t.Fatal(err)
	}
	informed, err := serviceentry.NewInformerSource(istiofake.NewSimpleClientset(), serviceentry.InformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel() // the first Run stops at once
	for _, r := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"kube.Controller", kc.Run}, {"serviceentry.Controller", se.Run}, {"memory.Registry", mem.Run},
		{"aggregate.Controller", agg.Run}, {"proxyview.View", view.Run}, {"proxyview.Debouncer", deb.Run},
		{"address.Index", idx.Run}, {"wds.Server", srv.Run}, {"xds.Server", proxies.Run},
		{"multicluster.Controller", mc.Run},
		{"serviceentry.InformerSource", informed.Run},
	} {
		_ = r.run(done)
		if err := r.run(done); !errors.Is(err, registry.ErrAlreadyRunning) {
			t.Errorf("%s: second Run = %v, want registry.ErrAlreadyRunning", r.name, err)
		}
	}
}
