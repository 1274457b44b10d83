package address

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

// derivations are the counts of Index.rederived.
type derivations struct{ workloads, services, entries, slices int64 }

func (x *Index) derivations() derivations {
	return derivations{x.rederived.workloads.Load(), x.rederived.services.Load(), x.rederived.entries.Load(), x.rederived.slices.Load()}
}

func (a derivations) minus(b derivations) derivations {
	return derivations{a.workloads - b.workloads, a.services - b.services, a.entries - b.entries, a.slices - b.slices}
}

// costWorld is an index over an aggregate of two memory registries, c1
// (the config cluster) and c2, each holding two namespaces: ns-a with
// three pods and two Services, ns-b with four pods and one Service.
type costWorld struct {
	regs    map[model.ClusterID]*memory.Registry
	agg     *aggregate.Controller
	idx     *Index
	settled func() bool
}

func newCostWorld(t *testing.T, opts Options) *costWorld {
	t.Helper()
	w := &costWorld{regs: map[model.ClusterID]*memory.Registry{}}
	var err error
	if w.agg, err = aggregate.New(aggregate.Options{}); err != nil {
		t.Fatal(err)
	}
	for i, c := range []model.ClusterID{"c1", "c2"} {
		reg, err := memory.New(memory.Options{ClusterID: c})
		if err != nil {
			t.Fatal(err)
		}
		w.regs[c] = reg
		if err := w.agg.Add(reg); err != nil {
			t.Fatal(err)
		}
		reg.SetNetwork(model.NetworkID(fmt.Sprint("net", i+1)))
		for ns, pods := range map[string]int{"ns-a": 3, "ns-b": 4} {
			reg.AddNamespace(&model.Namespace{Name: ns})
			for p := range pods {
				reg.AddWorkload(memory.Workload(fmt.Sprint("p", p), ns).Cluster(c).Address(fmt.Sprintf("10.%d.%d.%d", i+1, len(ns), p)).
					Labels(map[string]string{"app": ns}).NamedPort("http", 8080).Build())
			}
		}
		reg.AddService(memory.Service("s1", "ns-a").Cluster(c).Port("http", 80).VIP(fmt.Sprintf("10.96.%d.1", i+1)).Selector(map[string]string{"app": "ns-a"}).Build())
		reg.AddService(memory.Service("s2", "ns-a").Cluster(c).Port("http", 80).VIP(fmt.Sprintf("10.96.%d.2", i+1)).Selector(map[string]string{"app": "ns-a"}).Build())
		reg.AddService(memory.Service("s3", "ns-b").Cluster(c).Port("http", 80).VIP(fmt.Sprintf("10.96.%d.3", i+1)).Selector(map[string]string{"app": "ns-b"}).Build())
		wp := &model.Gateway{Namespace: "ns-a", Name: "wp", Class: "istio-waypoint", Labels: map[string]string{"istio.io/waypoint-for": "all"},
			StatusAddresses: []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.9.0.1"}}}
		reg.AddGateway(wp)
	}
	opts.Debounce = -1
	opts.ConfigCluster = "c1"
	if w.idx, err = New(w.agg, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{}, 2)
	go func() { _ = w.agg.Run(ctx); done <- struct{}{} }()
	go func() { _ = w.idx.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	w.settled = func() bool {
		return w.regs["c1"].Settled() && w.regs["c2"].Settled() && w.agg.Settled() && w.idx.Settled() && w.idx.HasSynced()
	}
	w.wait(t)
	return w
}

func (w *costWorld) wait(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !w.settled() {
		if time.Now().After(deadline) {
			t.Fatal("the index did not settle")
		}
		time.Sleep(time.Millisecond)
	}
}

// change makes a change, waits for the index to apply it, and returns
// the derivations it took.
func (w *costWorld) change(t *testing.T, f func()) derivations {
	t.Helper()
	before := w.idx.derivations()
	f()
	w.wait(t)
	return w.idx.derivations().minus(before)
}

// A change of the metadata re-derives what depends on it and nothing
// else: a namespace's labels, its workloads and services; a Gateway
// write that changes no address, listener or binding, nothing; a
// waypoint's address, what uses it; a cluster's network, its workloads
// and services.
func TestMetadataChangeCosts(t *testing.T) {
	for _, multi := range []bool{false, true} {
		t.Run(fmt.Sprintf("multi=%v", multi), func(t *testing.T) {
			w := newCostWorld(t, Options{MultiNetwork: multi})
			c1 := w.regs["c1"]
			// The config cluster's ns-a in each mode; with MultiNetwork
			// the index also holds c2's workloads, which read their own
			// cluster's namespace.
			got := w.change(t, func() {
				c1.AddNamespace(&model.Namespace{Name: "ns-a", Labels: map[string]string{"istio.io/use-waypoint": "wp"}})
			})
			if want := (derivations{workloads: 3, services: 2, slices: 2}); got != want {
				t.Errorf("ns-a's use-waypoint label: re-derived %+v, want its 3 workloads and 2 services (%+v)", got, want)
			}
			if uses := w.idx.Snapshot().Get("c1//Pod/ns-a/p0").GetWorkload().GetWaypoint(); uses == nil {
				t.Error("ns-a's pod uses no waypoint after its namespace's label")
			}

			wp := *c1.Gateways()[0]
			wp.Labels = map[string]string{"istio.io/waypoint-for": "all", "team": "a"}
			wp.Addresses = []model.GatewayAddress{{Type: model.IPAddressType, Value: "192.0.2.9"}}
			gen := w.idx.Snapshot().Generation()
			if got := w.change(t, func() { c1.AddGateway(&wp) }); got != (derivations{}) {
				t.Errorf("a Gateway write that changes no waypoint re-derived %+v, want nothing", got)
			}
			if w.idx.Snapshot().Generation() != gen {
				t.Error("a Gateway write that changes no waypoint published a generation")
			}

			moved := wp
			moved.StatusAddresses = []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.9.0.2"}}
			if got, want := w.change(t, func() { c1.AddGateway(&moved) }), (derivations{workloads: 3, services: 2}); got != want {
				t.Errorf("the waypoint's address: re-derived %+v, want what uses it, ns-a's (%+v)", got, want)
			}

			if !multi {
				return
			}
			got = w.change(t, func() { w.regs["c2"].SetNetwork("net3") })
			if want := (derivations{workloads: 7, services: 3, slices: 3}); got != want {
				t.Errorf("c2's network: re-derived %+v, want its 7 workloads and 3 services (%+v)", got, want)
			}
		})
	}
}
