package aggregate

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/model"
)

// Clusters, namespaces and Gateways of every member reach the aggregate,
// a change of one too; removing a Kubernetes member withdraws its
// cluster's, and an External member of the same cluster neither holds nor
// takes them.
func TestMetadataOfMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, se := newFake(model.Kubernetes, "a"), newFake(model.Kubernetes, "b"), newFake(model.External, "b")
		for _, f := range []*fakeRegistry{a, b} {
			c := f.shard.Cluster
			f.st.SetCluster(model.Cluster{ID: c, Network: "net-" + model.NetworkID(c)})
			f.st.UpsertNamespace(&model.Namespace{Cluster: c, Name: "ns"})
			f.st.UpsertGateway(&model.Gateway{Cluster: c, Namespace: "ns", Name: "gw"})
		}
		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []*fakeRegistry{a, b, se} {
			if err := agg.Add(f); err != nil {
				t.Fatal(err)
			}
		}
		stop := run(t, agg)
		defer stop()
		synctest.Wait()
		if got, want := agg.Clusters(), []model.Cluster{{ID: "a", Network: "net-a"}, {ID: "b", Network: "net-b"}}; !slices.Equal(got, want) {
			t.Errorf("Clusters() = %v, want %v", got, want)
		}
		if len(agg.Namespaces()) != 2 || len(agg.Gateways()) != 2 {
			t.Errorf("namespaces %v, gateways %v: want each cluster's", agg.Namespaces(), agg.Gateways())
		}

		b.st.SetCluster(model.Cluster{ID: "b", Network: "net-x"})
		synctest.Wait()
		if got := agg.Clusters()[1]; got.Network != "net-x" {
			t.Errorf("b after its network changed: %v", got)
		}

		if err := agg.Remove(model.External, "b"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(agg.Clusters()) != 2 || len(agg.Namespaces()) != 2 {
			t.Errorf("removing b's External registry withdrew b's metadata: %v %v", agg.Clusters(), agg.Namespaces())
		}
		if err := agg.Remove(model.Kubernetes, "b"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := agg.Clusters(); !slices.Equal(got, []model.Cluster{{ID: "a", Network: "net-a"}}) {
			t.Errorf("Clusters() after b left = %v, want a's alone", got)
		}
		for _, ns := range agg.Namespaces() {
			if ns.Cluster == "b" {
				t.Errorf("b's namespace %v stayed", ns)
			}
		}
		for _, gw := range agg.Gateways() {
			if gw.Cluster == "b" {
				t.Errorf("b's Gateway %v stayed", gw)
			}
		}
	})
}

// A registry that replaces another takes over its cluster's metadata:
// what only the old one held is withdrawn once the new one has synced
// (the replacement is a registry.MetadataDiscovery, as kube's is).
func TestMetadataOfAReplacement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old, repl := newFake(model.Kubernetes, "a"), newFake(model.Kubernetes, "a")
		old.st.UpsertNamespace(&model.Namespace{Cluster: "a", Name: "gone"})
		old.st.UpsertNamespace(&model.Namespace{Cluster: "a", Name: "kept"})
		old.st.UpsertGateway(&model.Gateway{Cluster: "a", Namespace: "kept", Name: "gone"})
		repl.st.UpsertNamespace(&model.Namespace{Cluster: "a", Name: "kept"})
		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = agg.Add(old)
		stop := run(t, agg)
		defer stop()
		synctest.Wait()
		if err := agg.Replace(metaFake{repl}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := agg.Namespaces(); len(got) != 1 || got[0].Name != "kept" {
			t.Errorf("namespaces after the replacement: %v, want kept alone", got)
		}
		if got := agg.Gateways(); len(got) != 0 {
			t.Errorf("Gateways after the replacement: %v, want none", got)
		}
	})
}

// Clusters, Namespaces and Gateways make the fake a
// registry.MetadataDiscovery when it is metaFake.
type metaFake struct{ *fakeRegistry }

func (f metaFake) Clusters() []model.Cluster      { return f.st.Clusters() }
func (f metaFake) Namespaces() []*model.Namespace { return f.st.Namespaces() }
func (f metaFake) Gateways() []*model.Gateway     { return f.st.Gateways() }
