package serviceentry

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A WorkloadEntriesOnly registry is a remote cluster's WorkloadEntries as
// workloads of that cluster, and nothing else: the source's ServiceEntries
// are neither services nor diagnostics, and handed-in workloads are
// ignored.
func TestWorkloadEntriesOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, selSE+"---\n"+replace(otherSE, "[10.9.0.2]", "[not-an-ip]")+"---\n"+we("w1", "ns", "a", "10.0.0.1"))...)
		c := start(t, src, Options{ClusterID: "west", WorkloadEntriesOnly: true})
		synctest.Wait()
		rec := &recorder{}
		defer c.Subscribe(rec)()
		expectEvents(t, rec, "wl add WorkloadEntry/ns/w1")

		if got := c.Services(); len(got) != 0 {
			t.Errorf("services = %v, want none: ServiceEntries are not read", got)
		}
		if ds := c.Diagnostics(); len(ds) != 0 {
			t.Errorf("diagnostics = %v, want none for the ignored (and invalid) ServiceEntry", ds)
		}
		ws := c.Workloads()
		if len(ws) != 1 || ws[0].Endpoint.Cluster != "west" || ws[0].Endpoint.Labels[labelTopologyCluster] != "west" {
			t.Fatalf("workloads = %v, want w1 of cluster west", ws)
		}

		// Pods and other clusters' entries handed in are ignored: the
		// registry selects nothing.
		c.HandleWorkload(podEvent(t, pod("p1", "ns", "a", "10.1.0.1")))
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: remoteWE("vm", "ns", "a", "10.2.0.1", "east")})
		// ServiceEntry changes are not read; a WorkloadEntry change is,
		// and an invalid one is a diagnostic of the cluster.
		src.Upsert(load(t, replace(selSE, "sel.internal", "moved.internal"))...)
		expectEvents(t, rec)
		if !c.Settled() {
			t.Error("not settled after ignored inputs")
		}
		src.Upsert(load(t, we("w1", "ns", "a", "10.0.0.2"))...)
		src.Upsert(load(t, we("bad", "ns", "a", "10.0.0.3/8"))...)
		expectEvents(t, rec, "wl update WorkloadEntry/ns/w1")
		if ds := c.Diagnostics(); len(ds) != 1 || ds[0].Name != "bad" || ds[0].Cluster != "west" || ds[0].Severity != model.Error {
			t.Errorf("diagnostics = %v, want one Error for ns/bad in west", ds)
		}
		src.DeleteWorkloadEntry("ns", "w1")
		expectEvents(t, rec, "wl delete WorkloadEntry/ns/w1")
	})
}

// remoteWE is the workload instance a WorkloadEntriesOnly registry of
// cluster publishes for a WorkloadEntry.
func remoteWE(name, ns, app, addr string, cluster model.ClusterID) *model.WorkloadInstance {
	w := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: ns, Name: name, Endpoint: model.Endpoint{
		Cluster: cluster, Serving: true,
		Labels: map[string]string{"app": app, labelTopologyCluster: string(cluster)},
	}}
	setAddress(&w.Endpoint, addr)
	return w
}

// A full registry's workloadSelectors select other clusters'
// WorkloadEntries handed in, of their own namespace, as Istio's
// ServiceEntry controller selects a remote cluster's: the endpoints keep
// the entry's cluster. Entries by DNS name or unix socket (which Istio
// never hands over) and entries claiming the registry's own cluster (its
// own come from its source) are ignored.
func TestRemoteWorkloadEntriesSelected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dnsSE := `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: dns, namespace: ns}
spec:
  hosts: [dns.internal]
  resolution: DNS
  ports: [{number: 80, name: http}]
  workloadSelector: {labels: {app: d}}
`
		src, _ := NewStaticSource(load(t, selSE+"---\n"+dnsSE)...)
		c := start(t, src, Options{ClusterID: "east"})
		synctest.Wait()
		rec := &recorder{}
		defer c.Subscribe(rec)()
		synctest.Wait()
		rec.take()

		vm := remoteWE("vm", "ns", "a", "10.2.0.1", "west")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: vm})
		expectEvents(t, rec, "eps sel.internal [10.2.0.1]")
		eps := c.Endpoints(model.ServiceKey{Namespace: "ns", Hostname: "sel.internal"}, registry.EndpointQuery{})
		if len(eps) != 1 || eps[0].Cluster != "west" || eps[0].Workload() != "ns/vm" || eps[0].Port != 80 {
			t.Fatalf("endpoints = %v, want ns/vm on port 80 in cluster west", eps)
		}
		if ws := c.Workloads(); len(ws) != 0 {
			t.Errorf("workloads = %v: a handed-in entry is not this registry's to publish", ws)
		}

		ignored := []*model.WorkloadInstance{
			remoteWE("other-ns", "elsewhere", "a", "10.2.0.2", "west"),
			remoteWE("by-name", "ns", "d", "vm.example.com", "west"),
			remoteWE("by-socket", "ns", "d", "unix:///var/run/vm.sock", "west"),
			remoteWE("claims-east", "ns", "a", "10.2.0.3", "east"),
		}
		for _, w := range ignored {
			c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: w})
		}
		expectEvents(t, rec)
		if got := addrs(c, "dns.internal"); len(got) != 0 {
			t.Errorf("dns.internal endpoints = %v, want none", got)
		}

		// An update that leaves the selector, then one back, then the
		// entry's move to a DNS name: each followed.
		moved := remoteWE("vm", "ns", "b", "10.2.0.1", "west")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: vm, Current: moved})
		expectEvents(t, rec, "eps sel.internal []")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: moved, Current: vm})
		expectEvents(t, rec, "eps sel.internal [10.2.0.1]")
		named := remoteWE("vm", "ns", "a", "vm.example.com", "west")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: vm, Current: named})
		expectEvents(t, rec, "eps sel.internal []")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: named, Current: vm})
		expectEvents(t, rec, "eps sel.internal [10.2.0.1]")
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventDelete, Previous: vm})
		expectEvents(t, rec, "eps sel.internal []")
	})
}

// An entry of the registry's own source and a handed-in entry of another
// cluster with the same namespace and name are two workloads.
func TestRemoteWorkloadEntrySameNameAsLocal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, selSE+"---\n"+we("vm", "ns", "a", "10.0.0.1"))...)
		c := start(t, src, Options{ClusterID: "east"})
		c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: remoteWE("vm", "ns", "a", "10.2.0.1", "west")})
		synctest.Wait()
		var got []string
		for _, ep := range c.Endpoints(model.ServiceKey{Namespace: "ns", Hostname: "sel.internal"}, registry.EndpointQuery{}) {
			got = append(got, string(ep.Cluster)+"/"+ep.Address())
		}
		slices.Sort(got)
		if want := []string{"east/10.0.0.1", "west/10.2.0.1"}; !slices.Equal(got, want) {
			t.Errorf("endpoints = %v, want %v", got, want)
		}
	})
}

// istioDiscovery makes client's discovery serve networking.istio.io/v1
// WorkloadEntries and ServiceEntries while served() holds, and answer
// NotFound otherwise, as a cluster without Istio's CRDs does. fail, when
// it holds, makes the request fail.
func istioDiscovery(client *manifest.IstioFake, served, fail func() bool) {
	client.Resources = []*metav1.APIResourceList{{
		GroupVersion: istioGroupVersion,
		APIResources: []metav1.APIResource{{Name: "workloadentries", Namespaced: true, Kind: "WorkloadEntry"}, {Name: "serviceentries", Namespaced: true, Kind: "ServiceEntry"}},
	}}
	client.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
		switch {
		case fail():
			return true, nil, apierrors.NewServiceUnavailable("discovery down")
		case !served():
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "networking.istio.io"}, "v1")
		}
		return false, nil, nil
	})
}

// With CRDPollInterval, a cluster without Istio's CRDs gives a source
// that syncs empty, and its WorkloadEntries arrive once the CRD is
// installed; WorkloadEntriesOnly runs no ServiceEntry informer.
func TestInformerSourceWaitsForTheCRD(t *testing.T) {
	objs := load(t, selSE+"---\n"+we("w1", "ns", "a", "10.0.0.1"))
	client := manifest.IstioClientset(objs)
	var served atomic.Bool
	istioDiscovery(client, served.Load, func() bool { return false })
	src, err := NewInformerSource(client, InformerOptions{WorkloadEntriesOnly: true, CRDPollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := New(src, Options{ClusterID: "west", WorkloadEntriesOnly: true})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	eventually(t, c.HasSynced)
	if ws := c.Workloads(); len(ws) != 0 {
		t.Fatalf("workloads = %v before the CRD is served", ws)
	}
	served.Store(true)
	eventually(t, func() bool { return len(c.Workloads()) == 1 })
	if !src.HasSynced() {
		t.Error("source not synced after its late informer listed")
	}
	if ses := src.ServiceEntries(); len(ses) != 0 {
		t.Errorf("ServiceEntries() = %v, want none: not watched", ses)
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "serviceentries" {
			t.Errorf("a WorkloadEntriesOnly source asked for ServiceEntries: %v", a)
		}
	}
}

// A discovery request that fails says nothing of the CRDs: the kinds are
// watched, and the source syncs when they list.
func TestInformerSourceWatchesWhenDiscoveryFails(t *testing.T) {
	client := manifest.IstioClientset(load(t, selSE+"---\n"+we("w1", "ns", "a", "10.0.0.1")))
	istioDiscovery(client, func() bool { return false }, func() bool { return true })
	src, err := NewInformerSource(client, InformerOptions{CRDPollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- src.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, src.HasSynced)
	if len(src.WorkloadEntries()) != 1 || len(src.ServiceEntries()) != 1 {
		t.Errorf("source holds %d WorkloadEntries and %d ServiceEntries, want 1 and 1", len(src.WorkloadEntries()), len(src.ServiceEntries()))
	}
}

// Run returns when ctx is done even while it waits for a CRD; a negative
// interval is refused.
func TestInformerSourceStopsWhileWaiting(t *testing.T) {
	client := manifest.IstioClientset(nil)
	istioDiscovery(client, func() bool { return false }, func() bool { return false })
	if _, err := NewInformerSource(client, InformerOptions{CRDPollInterval: -time.Second}); err == nil {
		t.Error("a negative CRDPollInterval was accepted")
	}
	src, _ := NewInformerSource(client, InformerOptions{CRDPollInterval: time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- src.Run(ctx) }()
	eventually(t, src.HasSynced)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}
