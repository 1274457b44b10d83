package wds_test

import (
	"slices"
	"testing"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

// The resource keys of the scenario: cluster-1 is the memory registry's
// default cluster.
const (
	app1 = "cluster-1//Pod/ns1/app-1"
	app2 = "cluster-1//Pod/ns1/app-2"
	app3 = "cluster-1//Pod/ns1/app-3"
	svc  = "ns1/app.ns1.svc.cluster.local"
)

// pod is a pod of the app Service, healthy, at ip.
func pod(name, ip string, labels map[string]string) *model.WorkloadInstance {
	l := map[string]string{"app": "app"}
	for k, v := range labels {
		l[k] = v
	}
	w := memory.Workload(name, "ns1").Address(ip).Labels(l).Cluster(memory.DefaultClusterID).ServiceAccount("spiffe://cluster.local/ns/ns1/sa/app").Build()
	w.Endpoint.Health = model.Healthy
	return w
}

// scenario is a Kubernetes Service selecting three pods, and the
// namespace and waypoint the index reads beside them.
func scenario(t *testing.T) *memory.Registry {
	t.Helper()
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := memory.Service("app", "ns1").Port("http", 80).VIP("10.96.0.1").Selector(map[string]string{"app": "app"}).Build()
	reg.AddService(s)
	reg.AddWorkload(pod("app-1", "10.0.0.1", nil), pod("app-2", "10.0.0.2", nil), pod("app-3", "10.0.0.3", nil))
	reg.AddNamespace(&model.Namespace{Name: "ns1"})
	reg.AddGateway(&model.Gateway{Namespace: "ns1", Name: "wp", Class: "istio-waypoint",
		Labels:          map[string]string{"istio.io/waypoint-for": "all"},
		StatusAddresses: []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.0.9.9"}}})
	return reg
}

// TestEndToEnd plays ztunnel against the server over TCP: a wildcard
// client and an on-demand one follow a Service's pods as they go
// unready, get a waypoint and are deleted; the wildcard client then
// reconnects with the versions it holds and is sent only what changed
// while it was away.
func TestEndToEnd(t *testing.T) {
	reg := scenario(t)
	e := newEnv(t, reg, envOptions{})

	// Wildcard: every address of the index.
	w := connect(t, e.conn, wildcardRequest())
	r := w.next()
	want := e.idx.Snapshot().Keys()
	expect(t, r, want, nil)
	if want := []string{app1, app2, app3, svc}; !slices.Equal(e.idx.Snapshot().Keys(), want) {
		t.Fatalf("index keys %q, want %q", e.idx.Snapshot().Keys(), want)
	}
	got := decode(t, r)
	if s := got[svc].GetService(); len(s.GetAddresses()) != 1 || s.GetPorts()[0].GetServicePort() != 80 {
		t.Errorf("service %v, want its VIP and port 80", s)
	}
	if r.SystemVersionInfo == "" || r.Nonce == "" {
		t.Errorf("response without version info or nonce: %v", r)
	}

	// On demand: nothing at first, then the names asked for.
	o := connect(t, e.conn, onDemandRequest())
	expect(t, o.next(), nil, nil)
	o.subscribe("/10.0.0.1")
	r = o.next()
	expect(t, r, []string{app1}, nil)
	if got := r.Resources[0].Aliases; !slices.Equal(got, []string{"/10.0.0.1"}) {
		t.Errorf("aliases %q, want [/10.0.0.1]", got)
	}
	if got := decode(t, r)[app1].GetWorkload().GetAddresses(); len(got) != 1 {
		t.Errorf("app-1 addresses %v", got)
	}
	o.subscribe("/10.9.9.9")
	expect(t, o.next(), nil, []string{"/10.9.9.9"})

	// A pod goes unready: one update of that workload.
	unready := pod("app-2", "10.0.0.2", nil)
	unready.Endpoint.Health = model.Unhealthy
	reg.AddWorkload(unready)
	r = w.next()
	expect(t, r, []string{app2}, nil)
	if st := decode(t, r)[app2].GetWorkload().GetStatus(); st != workloadapi.WorkloadStatus_UNHEALTHY {
		t.Errorf("app-2 status %v, want UNHEALTHY", st)
	}

	// A pod gets a waypoint: both clients are sent it, the on-demand
	// one under its alias (and nothing of app-2 before it).
	reg.AddWorkload(pod("app-1", "10.0.0.1", map[string]string{"istio.io/use-waypoint": "wp"}))
	for _, c := range []*ads{w, o} {
		r = c.next()
		expect(t, r, []string{app1}, nil)
		wl := decode(t, r)[app1].GetWorkload()
		if wl.GetWaypoint().GetAddress() == nil || wl.GetWaypoint().GetHboneMtlsPort() != 15008 {
			t.Errorf("app-1 waypoint %v, want 10.0.9.9:15008", wl.GetWaypoint())
		}
	}
	if got := r.Resources[0].Aliases; !slices.Equal(got, []string{"/10.0.0.1"}) {
		t.Errorf("on demand: aliases %q, want [/10.0.0.1]", got)
	}

	// A pod is deleted: removed.
	reg.DeleteWorkload(pod("app-3", "10.0.0.3", nil).Key())
	expect(t, w.next(), nil, []string{app3})
	if want := []string{app1, app2, svc}; !slices.Equal(keysOf(w.held), want) {
		t.Fatalf("wildcard client holds %q, want %q", keysOf(w.held), want)
	}

	// Reconnection: while the client is away, app-2 turns ready again and
	// app-1 is deleted; it is sent exactly that.
	held := w.held
	w.disconnect()
	reg.AddWorkload(pod("app-2", "10.0.0.2", nil))
	reg.DeleteWorkload(pod("app-1", "10.0.0.1", nil).Key())
	waitIndex(t, e.idx, func(s *address.Snapshot) bool {
		return s.Get(app1) == nil && s.Get(app2).GetWorkload().GetStatus() == workloadapi.WorkloadStatus_HEALTHY
	})
	// The on-demand client loses app-1 and with it what /10.0.0.1 names.
	expect(t, o.next(), nil, []string{"/10.0.0.1", app1})

	first := wildcardRequest()
	first.InitialResourceVersions = held
	w2 := connect(t, e.conn, first)
	r = w2.next()
	expect(t, r, []string{app2}, []string{app1})
	if st := decode(t, r)[app2].GetWorkload().GetStatus(); st != workloadapi.WorkloadStatus_HEALTHY {
		t.Errorf("app-2 status %v, want HEALTHY", st)
	}
	if r.Resources[0].Version == held[app2] {
		t.Errorf("app-2 kept its version %s across a change", held[app2])
	}
}
