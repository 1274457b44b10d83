package kube

import (
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// fakeMCS is the MCS API's fake (see manifest.MCSFake) with a count of
// the watches the informers opened; the limits of fakeCluster apply.
type fakeMCS struct {
	*manifest.MCSFake
	watches atomic.Int32
}

func newFakeMCS(objs ...runtime.Object) *fakeMCS {
	f := &fakeMCS{MCSFake: manifest.NewMCSFake(objs...)}
	tracker := f.Tracker()
	f.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace())
		if err != nil {
			return false, nil, err
		}
		f.watches.Add(1)
		return true, w, nil
	})
	return f
}

var (
	exportsGVR = mcsv1alpha1.SchemeGroupVersion.WithResource("serviceexports")
	importsGVR = mcsv1alpha1.SchemeGroupVersion.WithResource("serviceimports")
)

func exportObj(ns, name string) *mcsv1alpha1.ServiceExport {
	return &mcsv1alpha1.ServiceExport{ObjectMeta: meta(ns, name, nil)}
}

func importObj(ns, name string, typ mcsv1alpha1.ServiceImportType, ips ...string) *mcsv1alpha1.ServiceImport {
	return &mcsv1alpha1.ServiceImport{
		ObjectMeta: meta(ns, name, nil),
		Spec: mcsv1alpha1.ServiceImportSpec{Type: typ, IPs: ips,
			Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

func TestEndpointDiscoverability(t *testing.T) {
	discovery := MCSOptions{ServiceDiscovery: true}
	host := MCSOptions{ServiceDiscovery: true, Host: true}
	local := MCSOptions{ServiceDiscovery: true, Host: true, ClusterLocal: true}
	always, same := model.AlwaysDiscoverable, model.DiscoverableFromSameCluster
	tests := []struct {
		name                 string
		opts                 MCSOptions
		clusterSet, exported bool
		want                 model.Discoverability
	}{
		{"MCS off", MCSOptions{}, false, false, always},
		{"MCS off, exported", MCSOptions{}, false, true, always},
		{"discovery, not exported", discovery, false, false, same},
		{"discovery, exported", discovery, false, true, always},
		{"host, cluster.local, not exported", host, false, false, same},
		{"host, cluster.local, exported", host, false, true, always},
		{"host, clusterset.local, not exported", host, true, false, same},
		{"host, clusterset.local, exported", host, true, true, always},
		{"cluster-local, cluster.local, exported", local, false, true, same},
		{"cluster-local, clusterset.local, exported", local, true, true, always},
		{"cluster-local, clusterset.local, not exported", local, true, false, same},
	}
	for _, tt := range tests {
		if got := endpointDiscoverability(tt.opts, tt.clusterSet, tt.exported); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestConvertServiceImport(t *testing.T) {
	created := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	app := "kubernetes.io/h2c"
	tests := []struct {
		name     string
		spec     mcsv1alpha1.ServiceImportSpec
		vips     []string
		headless bool
		ports    []model.Port
		problems []string
	}{
		{
			name: "IPs in text order, duplicates once",
			spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, IPs: []string{"242.0.0.9", "fd00::1", "242.0.0.10", "242.0.0.9"}},
			vips: []string{"242.0.0.10/32", "242.0.0.9/32", "fd00::1/128"},
		},
		{
			name:     "bad IPs left out",
			spec:     mcsv1alpha1.ServiceImportSpec{IPs: []string{"not-an-ip", "fe80::1%eth0", "242.0.0.1"}},
			vips:     []string{"242.0.0.1/32"},
			problems: []string{`"fe80::1%eth0" is not an IP`, `"not-an-ip" is not an IP`},
		},
		{
			name:     "headless",
			spec:     mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.Headless},
			headless: true,
		},
		{
			name: "ports, protocols detected, bad ones left out",
			spec: mcsv1alpha1.ServiceImportSpec{Ports: []mcsv1alpha1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
				{Name: "web", Port: 8080, AppProtocol: &app},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
				{Name: "http", Port: 81},
				{Name: "big", Port: 70000},
			}},
			ports: []model.Port{
				{Name: "http", Port: 80, Protocol: model.HTTP},
				{Name: "web", Port: 8080, Protocol: model.HTTP2},
				{Name: "dns", Port: 53, Protocol: model.UDP},
			},
			problems: []string{`name "http" used twice`, "port 70000 out of range"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			si := &mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", CreationTimestamp: created}, Spec: tt.spec}
			got := convertServiceImport(si)
			var vips []string
			for _, v := range got.vips {
				vips = append(vips, v.String())
			}
			if !slices.Equal(vips, tt.vips) {
				t.Errorf("vips = %v, want %v", vips, tt.vips)
			}
			if got.headless != tt.headless || !got.created.Equal(created.Time) || got.namespace != "ns" || got.name != "svc" {
				t.Errorf("headless %v, created %v, key %s/%s", got.headless, got.created, got.namespace, got.name)
			}
			if diff := cmp.Diff(tt.ports, got.ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			if len(got.problems) != len(tt.problems) {
				t.Fatalf("problems = %q, want %d like %q", got.problems, len(tt.problems), tt.problems)
			}
			for i, p := range tt.problems {
				if !strings.Contains(got.problems[i], p) {
					t.Errorf("problem %d = %q, want it to say %q", i, got.problems[i], p)
				}
			}
			if want := len(tt.vips) > 0 || tt.headless; got.givesService() != want {
				t.Errorf("givesService = %v, want %v", got.givesService(), want)
			}
		})
	}
	// Bad input never panics.
	_ = convertServiceImport(&mcsv1alpha1.ServiceImport{})
}

func TestClusterSetService(t *testing.T) {
	base, _ := convertService(svcObj("ns", "svc", "10.96.0.1", map[string]string{"app": "x"}, svcPort("http", 80)), "", serviceConfig{cluster: "c1", domainSuffix: "cluster.local"})
	base.ExternalAddresses = map[model.ClusterID][]string{"c1": {"lb.example.com"}}
	base.ExportTo = []string{"."}
	withIPs := &importInfo{objectMeta: objectMeta{namespace: "ns", name: "svc"}, vips: []netip.Prefix{netip.MustParsePrefix("242.0.0.1/32")},
		ports: []model.Port{{Name: "tcp", Port: 81, Protocol: model.TCP}}}
	headless := &importInfo{objectMeta: objectMeta{namespace: "ns", name: "svc"}, headless: true}
	cs := model.ClusterSetHostname("svc", "ns")

	got := clusterSetService(withIPs, base, "c1")
	want := base.DeepCopy()
	want.Hostname, want.ExternalAddresses = cs, nil
	want.Addresses = map[model.ClusterID][]netip.Prefix{"c1": {netip.MustParsePrefix("242.0.0.1/32")}}
	if !got.Equals(want) {
		t.Errorf("with a base: %+v, want the base's copy under %s with the import's VIPs: %+v", got, cs, want)
	}
	if len(base.ExternalAddresses) == 0 || base.Hostname == cs {
		t.Error("the base was modified")
	}

	got = clusterSetService(withIPs, nil, "c1")
	if got.Hostname != cs || got.Resolution != model.ClientSideLB || !slices.Equal(got.Ports, withIPs.ports) || got.Provider != model.Kubernetes || len(got.Addresses["c1"]) != 1 {
		t.Errorf("without a base: %+v, want the import's ports and VIPs", got)
	}

	got = clusterSetService(headless, base, "c1")
	if got.Resolution != model.Passthrough || len(got.Addresses) != 0 || !slices.Equal(got.Ports, base.Ports) {
		t.Errorf("headless import: %+v, want Passthrough without VIPs", got)
	}
}

// The endpoints of a Service's cluster.local host follow its export, as
// the discoverability of each, and the Service records the export.
func TestControllerMCSServiceDiscovery(t *testing.T) {
	f := newFakeCluster(
		svcObj("ns", "svc", "10.96.0.1", nil, svcPort("http", 80)),
		sliceObj("ns", "svc-1", "svc", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", ready: true}, sliceEP{addr: "10.0.0.2", ready: true}),
	)
	mcs := newFakeMCS()
	c := startController(t, f, Options{ClusterID: "c1", MCS: MCSOptions{Client: mcs, ServiceDiscovery: true}})
	waitFor(t, "MCS informer watching", func() bool { return mcs.watches.Load() >= 1 })
	discoverabilities := func() []model.Discoverability {
		var out []model.Discoverability
		for _, ep := range c.Endpoints(skey("ns", "svc"), registry.EndpointQuery{}) {
			out = append(out, ep.Discoverability)
		}
		return out
	}
	same, always := model.DiscoverableFromSameCluster, model.AlwaysDiscoverable
	waitFor(t, "endpoints of an unexported Service only for their cluster", func() bool {
		return slices.Equal(discoverabilities(), []model.Discoverability{same, same})
	})
	if svc := c.ServiceByKey(skey("ns", "svc")); svc.Exports != nil {
		t.Errorf("unexported Service has exports %v", svc.Exports)
	}

	mustNot(t, mcs.Tracker().Create(exportsGVR, exportObj("ns", "svc"), "ns"))
	waitFor(t, "endpoints of an exported Service for every cluster", func() bool {
		return slices.Equal(discoverabilities(), []model.Discoverability{always, always})
	})
	if svc := c.ServiceByKey(skey("ns", "svc")); len(svc.Exports) != 1 {
		t.Errorf("exported Service's exports %v, want its cluster's", svc.Exports)
	} else if _, ok := svc.Exports["c1"]; !ok {
		t.Errorf("exported Service's exports %v, want c1", svc.Exports)
	}

	mustNot(t, mcs.Tracker().Delete(exportsGVR, "ns", "svc"))
	waitFor(t, "endpoints back to their cluster once the export is gone", func() bool {
		return slices.Equal(discoverabilities(), []model.Discoverability{same, same})
	})

	// An export of a Service the cluster lacks exports nothing, and says so.
	mustNot(t, mcs.Tracker().Create(exportsGVR, exportObj("ns", "ghost"), "ns"))
	waitFor(t, "a diagnostic for the export of no Service", func() bool {
		return slices.ContainsFunc(c.Diagnostics(), func(d model.Diagnostic) bool {
			return d.Kind == "ServiceExport" && d.Name == "ghost" && strings.Contains(d.Message, "not found")
		})
	})
}

// With the MCS API not served, the controller runs: no Service is
// exported (its endpoints are for its cluster alone), until the API
// appears, when the controller starts reading it.
func TestControllerMCSAPIAppearsLater(t *testing.T) {
	f := newFakeCluster(
		svcObj("ns", "svc", "10.96.0.1", nil, svcPort("http", 80)),
		sliceObj("ns", "svc-1", "svc", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", ready: true}),
	)
	mcs := newFakeMCS(exportObj("ns", "svc"))
	var served atomic.Bool
	mcs.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
		if served.Load() {
			return false, nil, nil // the fake's discovery, which serves it
		}
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: mcsv1alpha1.GroupName}, mcsGroupVersion)
	})
	c := startController(t, f, Options{ClusterID: "c1", MCS: MCSOptions{Client: mcs, ServiceDiscovery: true, CheckInterval: 5 * time.Millisecond}})
	eps := c.Endpoints(skey("ns", "svc"), registry.EndpointQuery{})
	if len(eps) != 1 || eps[0].Discoverability != model.DiscoverableFromSameCluster {
		t.Fatalf("without the MCS API: endpoints %v, want one for its cluster only", eps)
	}
	if len(c.Diagnostics()) != 0 {
		t.Errorf("an absent MCS API is no problem, got diagnostics %v", c.Diagnostics())
	}
	served.Store(true)
	waitFor(t, "the export read once the API is served", func() bool {
		eps := c.Endpoints(skey("ns", "svc"), registry.EndpointQuery{})
		return len(eps) == 1 && eps[0].Discoverability == model.AlwaysDiscoverable
	})
}

// A failing look for the MCS API is reported, and tried again.
func TestControllerMCSDiscoveryFails(t *testing.T) {
	mcs := newFakeMCS()
	var fail atomic.Bool
	fail.Store(true)
	mcs.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail.Load() {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "resource"}, "", nil)
		}
		return false, nil, nil
	})
	c := startController(t, newFakeCluster(), Options{MCS: MCSOptions{Client: mcs, ServiceDiscovery: true, CheckInterval: 5 * time.Millisecond}})
	ds := c.Diagnostics()
	if len(ds) != 1 || ds[0].Kind != "ServiceExport" || !strings.Contains(ds[0].Message, "forbidden") {
		t.Errorf("diagnostics %v, want one saying the MCS API could not be looked for", ds)
	}
	fail.Store(false)
	waitFor(t, "the diagnostic gone once the look succeeds", func() bool { return len(c.Diagnostics()) == 0 })
	waitFor(t, "the MCS informer watching", func() bool { return mcs.watches.Load() >= 1 })
}

// An import gives the ClusterSet host: the Service under
// name.namespace.svc.clusterset.local with the import's VIPs, whose
// endpoints are the Service's, discoverable elsewhere while exported;
// in cluster-local mode the cluster.local host's are for the cluster
// only. Removing the import removes the host.
func TestControllerMCSClusterSetHost(t *testing.T) {
	for _, clusterLocal := range []bool{false, true} {
		name := "host"
		if clusterLocal {
			name = "cluster-local"
		}
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(
				svcObj("ns", "svc", "10.96.0.1", nil, svcPort("http", 80)),
				sliceObj("ns", "svc-1", "svc", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", ready: true}),
			)
			mcs := newFakeMCS(exportObj("ns", "svc"))
			c := startController(t, f, Options{ClusterID: "c1", MCS: MCSOptions{Client: mcs, ServiceDiscovery: true, Host: true, ClusterLocal: clusterLocal}})
			waitFor(t, "MCS informers watching", func() bool { return mcs.watches.Load() >= 2 })
			csKey := model.ServiceKey{Namespace: "ns", Hostname: model.ClusterSetHostname("svc", "ns")}
			if c.ServiceByKey(csKey) != nil {
				t.Fatal("a ClusterSet host without an import")
			}
			mustNot(t, mcs.Tracker().Create(importsGVR, importObj("ns", "svc", mcsv1alpha1.ClusterSetIP, "242.0.0.1"), "ns"))
			waitFor(t, "the ClusterSet host", func() bool { return len(c.Endpoints(csKey, registry.EndpointQuery{})) == 1 })
			cs := c.ServiceByKey(csKey)
			if got := cs.Addresses["c1"]; len(got) != 1 || got[0].String() != "242.0.0.1/32" || cs.Resolution != model.ClientSideLB || !slices.Equal(cs.Ports, c.ServiceByKey(skey("ns", "svc")).Ports) {
				t.Errorf("ClusterSet service %+v, want the Service's ports with the import's VIP", cs)
			}
			local, set := c.Endpoints(skey("ns", "svc"), registry.EndpointQuery{})[0], c.Endpoints(csKey, registry.EndpointQuery{})[0]
			if set.Discoverability != model.AlwaysDiscoverable {
				t.Errorf("exported Service's ClusterSet endpoint is %v", set.Discoverability)
			}
			wantLocal := model.AlwaysDiscoverable
			if clusterLocal {
				wantLocal = model.DiscoverableFromSameCluster
			}
			if local.Discoverability != wantLocal {
				t.Errorf("cluster.local endpoint is %v, want %v", local.Discoverability, wantLocal)
			}
			if (local == set) == clusterLocal {
				t.Errorf("the hosts share their endpoint: %v, want %v (they do when their discoverability agrees)", local == set, !clusterLocal)
			}
			if ts := c.ProxyTargets(registry.ProxyQuery{Namespace: "ns", IPs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}); len(ts) != 1 || ts[0].Service.Hostname != host("ns", "svc") {
				t.Errorf("proxy targets %v, want the Service alone (the ClusterSet host is no target)", ts)
			}

			mustNot(t, mcs.Tracker().Delete(importsGVR, "ns", "svc"))
			waitFor(t, "the ClusterSet host gone with the import", func() bool { return c.ServiceByKey(csKey) == nil })
			if len(c.Endpoints(skey("ns", "svc"), registry.EndpointQuery{})) != 1 {
				t.Error("the Service lost its endpoint with the import")
			}
		})
	}
}

// An import of a Service the cluster lacks gives the ClusterSet host from
// the import alone: its ports and VIPs, no endpoints. A headless import
// gives a Passthrough host; one without IPs none, with a diagnostic.
func TestControllerMCSImportWithoutService(t *testing.T) {
	mcs := newFakeMCS(
		importObj("ns", "remote", mcsv1alpha1.ClusterSetIP, "242.0.0.2"),
		importObj("ns", "hl", mcsv1alpha1.Headless),
		importObj("ns", "pending", mcsv1alpha1.ClusterSetIP),
	)
	c := startController(t, newFakeCluster(), Options{ClusterID: "c1", MCS: MCSOptions{Client: mcs, ServiceDiscovery: true, Host: true}})
	remote := c.GetService(model.ClusterSetHostname("remote", "ns"))
	if remote == nil || remote.Ports[0].Name != "http" || len(remote.Addresses["c1"]) != 1 {
		t.Errorf("import-only ClusterSet service %+v, want the import's port and VIP", remote)
	}
	if hl := c.GetService(model.ClusterSetHostname("hl", "ns")); hl == nil || hl.Resolution != model.Passthrough {
		t.Errorf("headless import: %+v, want a Passthrough service", hl)
	}
	if p := c.GetService(model.ClusterSetHostname("pending", "ns")); p != nil {
		t.Errorf("import without IPs: %+v, want no service", p)
	}
	if ds := c.Diagnostics(); len(ds) != 1 || ds[0].Name != "pending" || ds[0].Kind != "ServiceImport" {
		t.Errorf("diagnostics %v, want one for the import without IPs", ds)
	}
}

// A WorkloadEntry a Service selects is one of its endpoints in the
// cluster, with the discoverability of the others: unexported, it is for
// the cluster alone (Istio leaves it discoverable everywhere, see the
// README).
func TestControllerMCSWorkloadEntry(t *testing.T) {
	f := newFakeCluster(svcObj("ns", "svc", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80)))
	mcs := newFakeMCS()
	c := startController(t, f, Options{ClusterID: "c1", MCS: MCSOptions{Client: mcs, ServiceDiscovery: true}})
	waitFor(t, "MCS informer watching", func() bool { return mcs.watches.Load() >= 1 })
	we := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "vm",
		Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("192.168.0.5")}, Labels: map[string]string{"app": "a"},
			WorkloadKind: model.KindWorkloadEntry, WorkloadNamespace: "ns", WorkloadName: "vm"}}
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: we})
	entry := func(want model.Discoverability) func() bool {
		return func() bool {
			eps := c.Endpoints(skey("ns", "svc"), registry.EndpointQuery{})
			return len(eps) == 1 && eps[0].Discoverability == want
		}
	}
	waitFor(t, "the unexported Service's entry for its cluster only", entry(model.DiscoverableFromSameCluster))
	mustNot(t, mcs.Tracker().Create(exportsGVR, exportObj("ns", "svc"), "ns"))
	waitFor(t, "the exported Service's entry for every cluster", entry(model.AlwaysDiscoverable))
}
