package kube

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestControllerInitialSync(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "reviews", "10.96.0.10", map[string]string{"app": "reviews"}, svcPort("http", 9080)),
		sliceObj("default", "reviews-abc", "reviews", discoveryv1.AddressTypeIPv4, 9080,
			sliceEP{"10.1.0.1", "reviews-1", true}, sliceEP{"10.1.0.2", "reviews-2", false}),
		podObj("default", "reviews-1", "10.1.0.1", "node-a", map[string]string{"app": "reviews"}),
		podObj("default", "reviews-2", "10.1.0.2", "node-a", map[string]string{"app": "reviews"}),
		nodeObj("node-a", "us-east1", "us-east1-b"),
	)
	c := startController(t, f, Options{})
	eps := c.Endpoints(skey("default", "reviews"), registry.EndpointQuery{})
	if len(eps) != 2 {
		t.Fatalf("got %d endpoints, want 2:\n%s", len(eps), dump(t, c))
	}
	if eps[0].Health != model.Healthy || eps[1].Health != model.Unhealthy {
		t.Errorf("health = %v, %v; want Healthy, Unhealthy", eps[0].Health, eps[1].Health)
	}
	if got := eps[0].Locality.String(); got != "us-east1/us-east1-b" {
		t.Errorf("locality = %q", got)
	}
	if got := eps[0].ServiceAccount; got != "spiffe://cluster.local/ns/default/sa/sa-reviews-1" {
		t.Errorf("service account = %q", got)
	}
	if n := len(c.Workloads()); n != 2 {
		t.Errorf("got %d workloads, want 2", n)
	}
}

func TestControllerRunTwiceAndStop(t *testing.T) {
	f := newFakeCluster()
	c := startController(t, f, Options{})
	if err := c.Run(ctx); err == nil {
		t.Error("second Run succeeded")
	}
	if c.Provider() != model.Kubernetes || c.Cluster() != DefaultClusterID {
		t.Errorf("provider/cluster = %v/%v", c.Provider(), c.Cluster())
	}
}

func TestControllerIncrementalEvents(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80)),
		svcObj("default", "b", "10.96.0.2", map[string]string{"app": "b"}, svcPort("http", 80)),
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
		sliceObj("default", "b-1", "b", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.2", "b-1", true}),
		podObj("default", "a-1", "10.1.0.1", "", map[string]string{"app": "a"}),
		podObj("default", "b-1", "10.1.0.2", "", map[string]string{"app": "b"}),
	)
	c := startController(t, f, Options{})
	rec := &recorder{}
	defer c.Subscribe(rec)()
	// The initial state lists endpoints by hostname: a's, then b's.
	// Waiting for b's consumes both.
	rec.waitEndpoints(t, host("default", "b"), func(eps []*model.Endpoint) bool { return len(eps) == 1 })

	// A slice change recomputes only its service.
	s := sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", false})
	_, err := f.DiscoveryV1().EndpointSlices("default").Update(ctx, s, metav1.UpdateOptions{})
	mustNot(t, err)
	ev := rec.waitEndpoints(t, host("default", "a"), func(eps []*model.Endpoint) bool { return len(eps) == 1 && eps[0].Health == model.Unhealthy })
	if ev.Shard != (model.ShardKey{Provider: model.Kubernetes, Cluster: DefaultClusterID}) {
		t.Errorf("shard = %v", ev.Shard)
	}
	rec.noEventsFor(t, host("default", "b"))

	// A pod label change updates only the services whose endpoints name
	// the pod, and its workload.
	p := podObj("default", "b-1", "10.1.0.2", "", map[string]string{"app": "b", "version": "v2"})
	_, err = f.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
	mustNot(t, err)
	rec.waitEndpoints(t, host("default", "b"), func(eps []*model.Endpoint) bool { return len(eps) == 1 && eps[0].Labels["version"] == "v2" })
	rec.noEventsFor(t, host("default", "a"))
	waitFor(t, "workload relabelled", func() bool {
		ws := c.WorkloadsByIP(netip.MustParseAddr("10.1.0.2"))
		return len(ws) == 1 && ws[0].Endpoint.Labels["version"] == "v2"
	})

	// An update that changes nothing the registry reads emits nothing.
	p.Annotations = map[string]string{"irrelevant": "x"}
	_, err = f.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
	mustNot(t, err)
	// Follow with a marker change to know the first was processed.
	_, err = f.CoreV1().Services("default").Create(ctx, svcObj("default", "marker", "10.96.0.9", nil, svcPort("http", 80)), metav1.CreateOptions{})
	mustNot(t, err)
	waitFor(t, "marker", func() bool { return c.GetService(host("default", "marker")) != nil })
	waitFor(t, "marker event", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.events) > 0
	})
	for _, e := range rec.take() {
		if se, ok := e.(registry.ServiceEvent); !ok || se.Service().Name != "marker" {
			t.Errorf("no-op update published %T %+v", e, e)
		}
	}
}

func TestControllerPendingEndpointReleasedByPod(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80)),
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}, sliceEP{"10.1.0.2", "a-2", true}),
		podObj("default", "a-1", "10.1.0.1", "", map[string]string{"app": "a"}),
	)
	c := startController(t, f, Options{})
	key := skey("default", "a")
	if eps := c.Endpoints(key, registry.EndpointQuery{}); len(eps) != 1 {
		t.Fatalf("want 1 endpoint while a-2 is unknown, got %d", len(eps))
	}
	diags := c.Diagnostics()
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "pending") || diags[0].Kind != "EndpointSlice" || diags[0].Name != "a-1" {
		t.Fatalf("diagnostics = %v, want one pending", diags)
	}
	if n := c.pendingEndpoints(); n != 1 {
		t.Errorf("pending endpoints (the metric) = %d, want 1", n)
	}
	rec := &recorder{}
	defer c.Subscribe(rec)()
	_, err := f.CoreV1().Pods("default").Create(ctx, podObj("default", "a-2", "10.1.0.2", "", map[string]string{"app": "a"}), metav1.CreateOptions{})
	mustNot(t, err)
	rec.waitEndpoints(t, key.Hostname, func(eps []*model.Endpoint) bool { return len(eps) == 2 })
	waitFor(t, "pending diagnostic cleared", func() bool { return len(c.Diagnostics()) == 0 })
	if n := c.pendingEndpoints(); n != 0 {
		t.Errorf("pending endpoints (the metric) = %d once the pod arrived, want 0", n)
	}
}

// TestPendingCountFollowsDiagnostics: the pending endpoints the metrics
// count are those the diagnostics withhold, through a slice's change and
// its Service's deletion.
func TestPendingCountFollowsDiagnostics(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80)),
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}, sliceEP{"10.1.0.2", "a-2", true}),
		svcObj("default", "b", "10.96.0.2", map[string]string{"app": "b"}, svcPort("http", 80)),
		sliceObj("default", "b-1", "b", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.3", "b-1", true}),
	)
	c := startController(t, f, Options{})
	waitFor(t, "three endpoints pending", func() bool { return c.pendingEndpoints() == 3 })
	_, err := f.DiscoveryV1().EndpointSlices("default").Update(ctx,
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}), metav1.UpdateOptions{})
	mustNot(t, err)
	waitFor(t, "two pending once a's slice lists one", func() bool { return c.pendingEndpoints() == 2 })
	mustNot(t, f.CoreV1().Services("default").Delete(ctx, "b", metav1.DeleteOptions{}))
	waitFor(t, "one pending once b is deleted", func() bool { return c.pendingEndpoints() == 1 })
	pending := 0
	for _, d := range c.Diagnostics() {
		if d.Kind == "EndpointSlice" && strings.Contains(d.Message, "pending") {
			pending++
		}
	}
	if pending != 1 {
		t.Errorf("%d pending diagnostics, want the 1 the count says", pending)
	}
}

func TestControllerPodIPReuse(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", nil, svcPort("http", 80)),
		// No targetRef: the pod is found by IP.
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "", true}),
		podObj("default", "old", "10.1.0.1", "", map[string]string{"gen": "old"}),
	)
	c := startController(t, f, Options{})
	key := skey("default", "a")
	if eps := c.Endpoints(key, registry.EndpointQuery{}); len(eps) != 1 || eps[0].Workload() != "default/old" {
		t.Fatalf("endpoints = %v", eps)
	}
	old := podObj("default", "old", "10.1.0.1", "", map[string]string{"gen": "old"})
	old.Status.Phase = corev1.PodSucceeded
	_, err := f.CoreV1().Pods("default").UpdateStatus(ctx, old, metav1.UpdateOptions{})
	mustNot(t, err)
	_, err = f.CoreV1().Pods("default").Create(ctx, podObj("default", "new", "10.1.0.1", "", map[string]string{"gen": "new"}), metav1.CreateOptions{})
	mustNot(t, err)
	waitFor(t, "endpoint follows the new pod", func() bool {
		eps := c.Endpoints(key, registry.EndpointQuery{})
		return len(eps) == 1 && eps[0].Workload() == "default/new" && eps[0].Labels["gen"] == "new"
	})
	waitFor(t, "only the new pod is a workload", func() bool {
		ws := c.WorkloadsByIP(netip.MustParseAddr("10.1.0.1"))
		return len(ws) == 1 && ws[0].Name == "new"
	})
}

func TestControllerNodeChangeUpdatesLocality(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", nil, svcPort("http", 80)),
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
		podObj("default", "a-1", "10.1.0.1", "node-1", nil),
		nodeObj("node-1", "r1", "z1"),
	)
	c := startController(t, f, Options{})
	key := skey("default", "a")
	_, err := f.CoreV1().Nodes().Update(ctx, nodeObj("node-1", "r1", "z2"), metav1.UpdateOptions{})
	mustNot(t, err)
	waitFor(t, "locality follows node", func() bool {
		eps := c.Endpoints(key, registry.EndpointQuery{})
		ws := c.Workloads()
		return len(eps) == 1 && eps[0].Locality.String() == "r1/z2" && eps[0].Labels[labelZone] == "z2" &&
			len(ws) == 1 && ws[0].Endpoint.Locality.String() == "r1/z2"
	})
}

func TestControllerNamespaceSelector(t *testing.T) {
	f := newFakeCluster(
		nsObj("in", map[string]string{"mesh": "on"}),
		nsObj("out", nil),
		svcObj("in", "a", "10.96.0.1", nil, svcPort("http", 80)),
		svcObj("out", "b", "10.96.0.2", nil, svcPort("http", 80)),
		sliceObj("out", "b-1", "b", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.2", "b-1", true}),
		podObj("out", "b-1", "10.1.0.2", "", nil),
	)
	c := startController(t, f, Options{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}})
	if c.GetService(host("out", "b")) != nil || len(c.Workloads()) != 0 || c.GetService(host("in", "a")) == nil {
		t.Fatalf("namespace filter not applied:\n%s", dump(t, c))
	}
	// Labelling the namespace brings all its objects in...
	_, err := f.CoreV1().Namespaces().Update(ctx, nsObj("out", map[string]string{"mesh": "on"}), metav1.UpdateOptions{})
	mustNot(t, err)
	waitFor(t, "namespace selected", func() bool {
		return len(c.Endpoints(skey("out", "b"), registry.EndpointQuery{})) == 1 && len(c.Workloads()) == 1
	})
	// ...and unlabelling takes them all out again.
	_, err = f.CoreV1().Namespaces().Update(ctx, nsObj("out", nil), metav1.UpdateOptions{})
	mustNot(t, err)
	waitFor(t, "namespace deselected", func() bool {
		return c.GetService(host("out", "b")) == nil && len(c.Workloads()) == 0 && len(c.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{netip.MustParseAddr("10.1.0.2")}})) == 0
	})
}

func TestControllerSystemNamespaceNetwork(t *testing.T) {
	f := newFakeCluster(
		nsObj("istio-system", map[string]string{labelNetwork: "net-1"}),
		podObj("default", "p", "10.1.0.1", "", nil),
		podObj("default", "q", "10.1.0.2", "", map[string]string{labelNetwork: "own"}),
	)
	c := startController(t, f, Options{})
	network := func(name string) model.NetworkID {
		for _, w := range c.Workloads() {
			if w.Name == name {
				return w.Endpoint.Network
			}
		}
		return "?"
	}
	if network("p") != "net-1" || network("q") != "own" {
		t.Fatalf("networks p=%q q=%q", network("p"), network("q"))
	}
	_, err := f.CoreV1().Namespaces().Update(ctx, nsObj("istio-system", map[string]string{labelNetwork: "net-2"}), metav1.UpdateOptions{})
	mustNot(t, err)
	waitFor(t, "network follows the system namespace", func() bool { return network("p") == "net-2" && network("q") == "own" })

	// Options.Network wins over the label.
	f2 := newFakeCluster(nsObj("istio-system", map[string]string{labelNetwork: "net-1"}), podObj("default", "p", "10.1.0.1", "", nil))
	c2 := startController(t, f2, Options{Network: "opt"})
	if ws := c2.Workloads(); len(ws) != 1 || ws[0].Endpoint.Network != "opt" {
		t.Errorf("Options.Network ignored: %v", ws)
	}
}

func TestControllerWorkloadEntries(t *testing.T) {
	svc := svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"},
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("web")},
		corev1.ServicePort{Name: "tcp", Port: 90, TargetPort: intstr.FromInt32(9090)},
		corev1.ServicePort{Name: "raw", Port: 100})
	f := newFakeCluster(svc, svcObj("other", "a", "10.96.0.2", map[string]string{"app": "a"}, svcPort("http", 80)))
	c := startController(t, f, Options{ClusterID: "c1"})
	we := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "default", Name: "vm",
		PortMap: map[string]uint32{"web": 8080},
		Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("192.168.0.5")}, Labels: map[string]string{"app": "a"},
			Cluster: "", Network: "vm-net", WorkloadKind: model.KindWorkloadEntry, WorkloadNamespace: "default", WorkloadName: "vm"}}
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: we})
	// The worker applies it: Settled says when.
	waitFor(t, "the entry applied", c.Settled)
	eps := c.Endpoints(skey("default", "a"), registry.EndpointQuery{})
	if len(eps) != 3 {
		t.Fatalf("got %d endpoints, want 3:\n%s", len(eps), dump(t, c))
	}
	ports := map[string]uint32{}
	for _, ep := range eps {
		ports[ep.ServicePortName] = ep.Port
		if ep.Cluster != "c1" || ep.Network != "vm-net" {
			t.Errorf("endpoint %+v not in this cluster's shard", ep)
		}
	}
	if ports["http"] != 8080 || ports["tcp"] != 9090 || ports["raw"] != 100 {
		t.Errorf("ports = %v", ports)
	}
	if n := len(c.Endpoints(skey("other", "a"), registry.EndpointQuery{})); n != 0 {
		t.Errorf("service of another namespace selected the entry: %d endpoints", n)
	}
	// A pod instance handed in is ignored.
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Kind: model.KindPod, Namespace: "default", Name: "x",
		Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("1.1.1.1")}, Labels: map[string]string{"app": "a"}}}})
	// Relabel: no longer selected.
	we2 := we.DeepCopy()
	we2.Endpoint.Labels = map[string]string{"app": "b"}
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: we, Current: we2})
	waitFor(t, "the relabel applied", c.Settled)
	if n := len(c.Endpoints(skey("default", "a"), registry.EndpointQuery{})); n != 0 {
		t.Errorf("relabelled entry still selected: %d", n)
	}
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: we2, Current: we})
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventDelete, Previous: we})
	waitFor(t, "the delete applied", c.Settled)
	if n := len(c.Endpoints(skey("default", "a"), registry.EndpointQuery{})); n != 0 {
		t.Errorf("deleted entry still selected: %d", n)
	}
}

// Two clusters' WorkloadEntries of one namespace and name (as
// aggregate.ShareAcrossClusters hands them to every cluster's Services,
// from a remote cluster's WorkloadEntry registry and the config
// cluster's) are two entries: each selected, and deleting one keeps the
// other.
func TestControllerWorkloadEntriesOfTwoClusters(t *testing.T) {
	f := newFakeCluster(svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80)))
	c := startController(t, f, Options{ClusterID: "c1"})
	vm := func(cluster model.ClusterID, ip string) *model.WorkloadInstance {
		return &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "default", Name: "vm",
			Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Labels: map[string]string{"app": "a"}, Cluster: cluster}}
	}
	east, west := vm("east", "192.168.0.1"), vm("west", "192.168.0.2")
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: east})
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: west})
	waitFor(t, "the entries applied", c.Settled)
	addrs := func() []string {
		var out []string
		for _, ep := range c.Endpoints(skey("default", "a"), registry.EndpointQuery{}) {
			out = append(out, ep.Address())
		}
		slices.Sort(out)
		return out
	}
	if got := addrs(); !slices.Equal(got, []string{"192.168.0.1", "192.168.0.2"}) {
		t.Fatalf("endpoints = %v, want both clusters' entries", got)
	}
	c.HandleWorkload(registry.WorkloadEvent{Type: model.EventDelete, Previous: east})
	waitFor(t, "the delete applied", c.Settled)
	if got := addrs(); !slices.Equal(got, []string{"192.168.0.2"}) {
		t.Errorf("endpoints = %v after east's entry went, want west's", got)
	}
}

func TestControllerProxyTargets(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", nil, svcPort("http", 80)),
		svcObj("other", "b", "10.96.0.2", nil, svcPort("http", 80)),
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "p", true}),
		sliceObj("other", "b-1", "b", discoveryv1.AddressTypeIPv4, 8081, sliceEP{"10.1.0.1", "", true}),
		podObj("default", "p", "10.1.0.1", "", nil),
	)
	c := startController(t, f, Options{})
	ip := netip.MustParseAddr("10.1.0.1")
	if got := c.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip}}); len(got) != 2 {
		t.Errorf("unscoped targets = %v", got)
	}
	got := c.ProxyTargets(registry.ProxyQuery{Namespace: "default", IPs: []netip.Addr{ip}})
	if len(got) != 1 || got[0].Service.Name != "a" || got[0].TargetPort != 8080 || got[0].Port.Port != 80 {
		t.Errorf("scoped targets = %+v", got)
	}
}

func TestControllerSubscribeBeforeRunHasSynced(t *testing.T) {
	f := newFakeCluster(svcObj("default", "a", "10.96.0.1", nil, svcPort("http", 80)))
	c, err := New(f, Options{})
	mustNot(t, err)
	if c.HasSynced() {
		t.Fatal("synced before Run")
	}
	block := make(chan struct{})
	var got atomic.Int32
	unsub := c.Subscribe(registry.HandlerFuncs{ServiceFunc: func(registry.ServiceEvent) { <-block; got.Add(1) }})
	defer unsub()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "service converted", func() bool { return c.GetService(host("default", "a")) != nil })
	if c.HasSynced() {
		t.Error("HasSynced before the handler received the initial state")
	}
	close(block)
	waitFor(t, "synced", c.HasSynced)
	if got.Load() != 1 {
		t.Errorf("handler got %d events", got.Load())
	}
}

// A pod is a workload, and so selectable by ServiceEntries, only while it
// serves: it leaves when it stops being Ready or starts deleting, and
// comes back when Ready again. The endpoints that name it keep its
// metadata throughout; only the slice decides their health.
func TestPodWorkloadFollowsReadiness(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80)),
		sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
		podObj("default", "a-1", "10.1.0.1", "", map[string]string{"app": "a"}),
	)
	c := startController(t, f, Options{})
	ip := netip.MustParseAddr("10.1.0.1")
	health := func(want model.HealthStatus) func() bool {
		return func() bool { ws := c.WorkloadsByIP(ip); return len(ws) == 1 && ws[0].Endpoint.Health == want }
	}
	waitFor(t, "the ready pod's workload, Healthy", health(model.Healthy))
	update := func(mod func(*corev1.Pod)) {
		t.Helper()
		p := podObj("default", "a-1", "10.1.0.1", "", map[string]string{"app": "a"})
		mod(p)
		_, err := f.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
		mustNot(t, err)
	}

	update(func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse })
	waitFor(t, "the workload of a pod no longer Ready, Unhealthy", health(model.Unhealthy))
	if eps := c.Endpoints(skey("default", "a"), registry.EndpointQuery{}); len(eps) != 1 || eps[0].Workload() != "default/a-1" {
		t.Errorf("endpoints of the not-Ready pod = %+v, want its endpoint with its metadata", eps)
	}
	update(func(*corev1.Pod) {})
	waitFor(t, "the workload Healthy again once Ready", health(model.Healthy))
	update(func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now })
	waitFor(t, "the workload of a deleting pod, Unhealthy", health(model.Unhealthy))
	update(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
	waitFor(t, "the workload of a failed pod withdrawn", func() bool { return len(c.WorkloadsByIP(ip)) == 0 })
}
