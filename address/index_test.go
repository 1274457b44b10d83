package address_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// running is an index over a memory registry, with its changes recorded.
type running struct {
	reg     *memory.Registry
	idx     *address.Index
	changes chan address.Change
}

func start(t *testing.T, opts address.Options) *running {
	t.Helper()
	reg, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Debounce = -1
	idx, err := address.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{reg: reg, idx: idx, changes: make(chan address.Change, 100)}
	idx.Subscribe(func(c address.Change) { r.changes <- c })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = reg.Run(ctx); done <- struct{}{} }()
	go func() { _ = idx.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	waitFor(t, "the index to sync", idx.HasSynced)
	return r
}

// next returns the events of the next generation that has any.
func (r *running) next(t *testing.T) []address.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case c := <-r.changes:
			if len(c.Events) > 0 {
				return c.Events
			}
		case <-timeout:
			t.Fatal("no change came")
			return nil
		}
	}
}

func pod(name string, labels map[string]string, ip string) *model.WorkloadInstance {
	return memory.Workload(name, "ns").Address(ip).Labels(labels).NamedPort("http", 8080).Build()
}

func TestEventsPerResource(t *testing.T) {
	r := start(t, address.Options{})
	p := pod("p1", map[string]string{"app": "a"}, "10.0.0.1")
	r.reg.AddWorkload(p)
	const uid = "c1//Pod/ns/p1"
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: uid, Type: model.EventAdd}}) {
		t.Fatalf("adding a pod: events %v", got)
	}
	unready := p.DeepCopy()
	unready.Endpoint.Health = model.Unhealthy
	r.reg.AddWorkload(unready)
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: uid, Type: model.EventUpdate}}) {
		t.Fatalf("a pod going unready: events %v", got)
	}
	if w := r.idx.Snapshot().Get(uid).GetWorkload(); w.GetStatus() != workloadapi.WorkloadStatus_UNHEALTHY {
		t.Errorf("unready pod's status = %v", w.GetStatus())
	}
	svc := memory.Service("a", "ns").PortWith(model.Port{Name: "http", Port: 80, TargetPortName: "http"}).
		VIP("10.96.0.1").Selector(map[string]string{"app": "a"}).Build()
	r.reg.AddService(svc)
	// The service is added, and the pod it selects now lists it.
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: uid, Type: model.EventUpdate}, {Key: "ns/a.ns.svc.cluster.local", Type: model.EventAdd}}) {
		t.Fatalf("adding a selecting service: events %v", got)
	}
	snap := r.idx.Snapshot()
	// A service comes with the workloads that back it, by VIP or key.
	for _, name := range []string{"/10.96.0.1", "ns/a.ns.svc.cluster.local"} {
		if got := snap.Lookup(name); len(got) != 2 || got[0].Key != "ns/a.ns.svc.cluster.local" || got[1].Key != uid {
			t.Errorf("Lookup(%q) = %v, want the service and its pod", name, got)
		}
	}
	if got := address.Aliases(snap.Get(uid)); !slices.Equal(got, []string{"/10.0.0.1"}) {
		t.Errorf("the pod's aliases = %v", got)
	}
	if got := snap.Lookup("/10.9.9.9"); len(got) != 0 {
		t.Errorf("Lookup of an unknown IP = %v", got)
	}
	if got := snap.Lookup("/10.0.0.1"); len(got) != 1 || got[0].Key != uid {
		t.Errorf("Lookup of the pod IP = %v", got)
	}
	r.reg.DeleteWorkload(p.Key())
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: uid, Type: model.EventDelete}}) {
		t.Fatalf("deleting the pod: events %v", got)
	}
	if got := r.idx.Snapshot().Lookup("/10.0.0.1"); len(got) != 0 {
		t.Errorf("Lookup of a deleted pod's IP = %v", got)
	}
}

// A hostile tenant's labels cannot reach another namespace's waypoint
// unless the waypoint admits it, and bad labels or Gateways give
// diagnostics, never a panic.
func TestWaypointBadInput(t *testing.T) {
	r := start(t, address.Options{})
	r.reg.AddNamespace(&model.Namespace{Name: "ns"}, &model.Namespace{Name: "infra"})
	r.reg.AddGateway(
		waypointGateway("infra", "private", "all", model.FromSame, model.GatewayAddress{Type: model.IPAddressType, Value: "10.9.0.1"}),
		waypointGateway("ns", "noaddr", "all", ""),
		waypointGateway("ns", "badip", "all", "", model.GatewayAddress{Type: model.IPAddressType, Value: "not-an-ip"}),
		waypointGateway("ns", "good", "all", "", model.GatewayAddress{Type: model.HostnameType, Value: "good.ns.svc.cluster.local"}),
	)
	cases := []struct {
		name   string
		labels map[string]string
		want   string // the waypoint hostname, "" for none
		diag   string // a diagnostic about the pod contains this
	}{
		{"other namespace, not admitted", map[string]string{"istio.io/use-waypoint": "private", "istio.io/use-waypoint-namespace": "infra"}, "", "does not admit namespace ns"},
		{"no address", map[string]string{"istio.io/use-waypoint": "noaddr"}, "", "is not ready"},
		{"malformed name", map[string]string{"istio.io/use-waypoint": "../../etc/x\x00"}, "", "is not ready"},
		{"empty name", map[string]string{"istio.io/use-waypoint": ""}, "", "is not ready"},
		{"bad IP only", map[string]string{"istio.io/use-waypoint": "badip"}, "", ""},
		{"good", map[string]string{"istio.io/use-waypoint": "good"}, "good.ns.svc.cluster.local", ""},
	}
	for i, tc := range cases {
		r.reg.AddWorkload(pod("p"+string(rune('a'+i)), tc.labels, "10.0.1."+string(rune('1'+i))))
	}
	waitFor(t, "the pods", func() bool { return len(r.idx.Snapshot().Workloads()) == len(cases) })
	snap := r.idx.Snapshot()
	for i, tc := range cases {
		name := "p" + string(rune('a'+i))
		w := snap.Get("c1//Pod/ns/" + name).GetWorkload()
		if got := w.GetWaypoint().GetHostname().GetHostname(); got != tc.want {
			t.Errorf("%s: waypoint %q, want %q", tc.name, got, tc.want)
		}
		if w.GetWaypoint() != nil && tc.want == "" {
			t.Errorf("%s: waypoint %v, want none", tc.name, w.GetWaypoint())
		}
		found := false
		for _, d := range snap.Diagnostics() {
			if d.Kind == "Pod" && d.Name == name && strings.Contains(d.Message, tc.diag) {
				found = true
			}
		}
		if tc.diag != "" && !found {
			t.Errorf("%s: no diagnostic naming pod %s with %q in %v", tc.name, name, tc.diag, snap.Diagnostics())
		}
	}
	var gwDiags []string
	for _, d := range snap.Diagnostics() {
		if d.Kind == "Gateway" {
			gwDiags = append(gwDiags, d.Name+": "+d.Message)
		}
	}
	if len(gwDiags) != 2 || !strings.HasPrefix(gwDiags[0], "badip:") || !strings.HasPrefix(gwDiags[1], "noaddr:") {
		t.Errorf("Gateway diagnostics = %q, want one for badip and one for noaddr", gwDiags)
	}
}

func waypointGateway(ns, name, forTraffic, from string, addrs ...model.GatewayAddress) *model.Gateway {
	gw := &model.Gateway{Namespace: ns, Name: name, Class: "istio-waypoint",
		Labels: map[string]string{"istio.io/waypoint-for": forTraffic}, StatusAddresses: addrs}
	if from != "" {
		gw.Listeners = []model.GatewayListener{{Name: "mesh", Port: 15008, Protocol: "HBONE",
			AllowedRoutes: model.AllowedRoutes{From: from}}}
	}
	return gw
}

func TestOptions(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range []string{"a/b", "has space"} {
		if _, err := address.New(reg, address.Options{TrustDomain: td}); !errors.Is(err, address.ErrInvalidOptions) {
			t.Errorf("TrustDomain %q: error %v, want ErrInvalidOptions", td, err)
		}
	}
	idx, err := address.New(reg, address.Options{})
	if err != nil || idx.Snapshot().Generation() != 0 || idx.HasSynced() {
		t.Errorf("New with defaults: %v, %v", idx, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := idx.Run(ctx); err != nil {
		t.Errorf("Run with a done context: %v", err)
	}
	if err := idx.Run(context.Background()); !errors.Is(err, registry.ErrAlreadyRunning) {
		t.Errorf("second Run: %v, want ErrAlreadyRunning", err)
	}
}

// Changes that come within the debounce window are one generation.
func TestDebounceBatches(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := address.New(reg, address.Options{Debounce: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan address.Change, 10)
	idx.Subscribe(func(c address.Change) { changes <- c })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = reg.Run(ctx); done <- struct{}{} }()
	go func() { _ = idx.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	waitFor(t, "the index to sync", idx.HasSynced)
	for len(changes) > 0 {
		<-changes
	}
	before := time.Now()
	reg.AddWorkload(pod("p1", nil, "10.0.0.1"))
	reg.AddWorkload(pod("p2", nil, "10.0.0.2"))
	c := <-changes
	// Stamped with when its first event reached the index, which the
	// debounce then held for its quiet period.
	if c.Since.Before(before) || time.Since(c.Since) < 500*time.Millisecond {
		t.Errorf("Since = %v: want the first event's arrival, after %v and 500ms or more before the change was told", c.Since, before)
	}
	want := []address.Event{{Key: "c1//Pod/ns/p1", Type: model.EventAdd}, {Key: "c1//Pod/ns/p2", Type: model.EventAdd}}
	if !slices.Equal(c.Events, want) || c.Snapshot.Generation() != c.Generation || c.Snapshot.Len() != 2 {
		t.Errorf("one generation for both: %+v, snapshot of %d", c.Events, c.Snapshot.Len())
	}
}

// When a cluster's network changes, its Services' VIPs follow in the
// next generation, with nothing else changing.
func TestClusterNetworkChange(t *testing.T) {
	r := start(t, address.Options{})
	r.reg.SetNetwork("net1")
	r.reg.AddService(memory.Service("a", "ns").Port("http", 80).VIP("10.96.0.1").Build())
	r.next(t)
	vip := func() string {
		return r.idx.Snapshot().Get("ns/a.ns.svc.cluster.local").GetService().GetAddresses()[0].GetNetwork()
	}
	if got := vip(); got != "net1" {
		t.Fatalf("VIP on %q, want net1", got)
	}
	r.reg.SetNetwork("net2")
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: "ns/a.ns.svc.cluster.local", Type: model.EventUpdate}}) {
		t.Errorf("events %v, want the service's update", got)
	}
	if got := vip(); got != "net2" {
		t.Errorf("VIP on %q after the cluster moved to net2", got)
	}
}

// The metadata reaches the index through the registry: a namespace's
// waypoint label changes its workloads and services; a Gateway write
// that changes nothing the index reads (a label of its own, a spec
// address) publishes no generation; its status address changing moves
// the waypoint of what uses it.
func TestMetadataChanges(t *testing.T) {
	r := start(t, address.Options{})
	r.reg.AddNamespace(&model.Namespace{Name: "ns"})
	wp := waypointGateway("ns", "wp", "all", "", model.GatewayAddress{Type: model.IPAddressType, Value: "10.9.0.1"})
	r.reg.AddGateway(wp)
	r.reg.AddWorkload(pod("p1", nil, "10.0.0.1"))
	r.next(t)
	waypoint := func() string {
		a := r.idx.Snapshot().Get("c1//Pod/ns/p1").GetWorkload().GetWaypoint().GetAddress().GetAddress()
		if a == nil {
			return ""
		}
		ip, _ := netip.AddrFromSlice(a)
		return ip.String()
	}
	if got := waypoint(); got != "" {
		t.Fatalf("waypoint %q before the namespace uses one", got)
	}

	r.reg.AddNamespace(&model.Namespace{Name: "ns", Labels: map[string]string{"istio.io/use-waypoint": "wp"}})
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: "c1//Pod/ns/p1", Type: model.EventUpdate}}) {
		t.Errorf("events %v, want the pod's update", got)
	}
	if got := waypoint(); got != "10.9.0.1" {
		t.Errorf("waypoint %q, want the namespace's at 10.9.0.1", got)
	}

	gen := r.idx.Snapshot().Generation()
	labelled := *wp
	labelled.Labels = map[string]string{"istio.io/waypoint-for": "all", "team": "a"}
	labelled.Addresses = []model.GatewayAddress{{Type: model.IPAddressType, Value: "192.0.2.1"}}
	r.reg.AddGateway(&labelled)
	waitFor(t, "the index to apply the write", func() bool { return r.reg.Settled() && r.idx.Settled() })
	if got := r.idx.Snapshot().Generation(); got != gen {
		t.Errorf("a Gateway write that changes no waypoint published generation %d (was %d)", got, gen)
	}

	moved := labelled
	moved.StatusAddresses = []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.9.0.2"}}
	r.reg.AddGateway(&moved)
	if got := r.next(t); !slices.Equal(got, []address.Event{{Key: "c1//Pod/ns/p1", Type: model.EventUpdate}}) {
		t.Errorf("events %v, want the pod's update", got)
	}
	if got := waypoint(); got != "10.9.0.2" {
		t.Errorf("waypoint %q after the Gateway's address moved, want 10.9.0.2", got)
	}
}
