package registry_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestHandlerFuncsEventKinds(t *testing.T) {
	svc := func(registry.ServiceEvent) {}
	eps := func(registry.EndpointsEvent) {}
	wl := func(registry.WorkloadEvent) {}
	gws := func(registry.NetworkGatewaysEvent) {}
	synced := func(registry.SyncedEvent) {}
	ns := func(registry.NamespaceEvent) {}
	tests := []struct {
		name string
		h    registry.HandlerFuncs
		want registry.EventKinds
	}{
		{"none", registry.HandlerFuncs{}, 0},
		{"services", registry.HandlerFuncs{ServiceFunc: svc}, registry.ServiceEvents},
		{"endpoints", registry.HandlerFuncs{EndpointsFunc: eps}, registry.EndpointsEvents},
		{"workloads", registry.HandlerFuncs{WorkloadFunc: wl}, registry.WorkloadEvents},
		{"services and workloads", registry.HandlerFuncs{ServiceFunc: svc, WorkloadFunc: wl}, registry.ServiceEvents | registry.WorkloadEvents},
		{"gateways", registry.HandlerFuncs{NetworkGatewaysFunc: gws}, registry.NetworkGatewayEvents},
		{"synced", registry.HandlerFuncs{SyncedFunc: synced}, registry.SyncedEvents},
		{"metadata, from any of its three", registry.HandlerFuncs{NamespaceFunc: ns}, registry.MetadataEvents},
		{"all but gateways, synced and metadata", registry.HandlerFuncs{ServiceFunc: svc, EndpointsFunc: eps, WorkloadFunc: wl},
			registry.AllEvents &^ registry.NetworkGatewayEvents &^ registry.SyncedEvents &^ registry.MetadataEvents},
		{"all", registry.HandlerFuncs{ServiceFunc: svc, EndpointsFunc: eps, WorkloadFunc: wl, NetworkGatewaysFunc: gws, SyncedFunc: synced, NamespaceFunc: ns}, registry.AllEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.EventKinds(); got != tt.want {
				t.Errorf("EventKinds() = %06b, want %06b", got, tt.want)
			}
		})
	}
}

// kindRecorder records the kind and subject of every event it is given.
type kindRecorder struct {
	mu  sync.Mutex
	got []string
}

func (r *kindRecorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
}

func (r *kindRecorder) OnService(e registry.ServiceEvent) { r.add("service " + e.Service().Name) }
func (r *kindRecorder) OnEndpoints(e registry.EndpointsEvent) {
	r.add("endpoints " + string(e.Service.Hostname))
}
func (r *kindRecorder) OnWorkload(e registry.WorkloadEvent) { r.add("workload " + e.Workload().Name) }

func (r *kindRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// selectiveRecorder is a kindRecorder that takes only the kinds in takes.
type selectiveRecorder struct {
	kindRecorder
	takes registry.EventKinds
}

func (r *selectiveRecorder) EventKinds() registry.EventKinds { return r.takes }

// otherEvent is an event of a type of the caller's own, which the
// notifier cannot classify: every subscriber that takes any kind gets it.
type otherEvent struct{ name string }

func (e otherEvent) Deliver(h registry.Handler) {
	h.OnService(registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: e.name}})
}

func TestNotifierSelectiveSubscribers(t *testing.T) {
	initial := []registry.Event{
		registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: "a"}, Initial: true},
		registry.EndpointsEvent{Service: model.ServiceKey{Hostname: "a.example"}, Initial: true},
		registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Name: "pod-a"}, Initial: true},
	}
	changes := []registry.Event{
		registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Name: "pod-b"}},
		registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: "b"}},
		otherEvent{name: "other"},
		registry.EndpointsEvent{Service: model.ServiceKey{Hostname: "b.example"}},
	}
	// every is what a handler that takes every kind gets, in order.
	every := []string{"service a", "endpoints a.example", "workload pod-a", "workload pod-b", "service b", "service other", "endpoints b.example"}
	tests := []struct {
		name  string
		takes registry.EventKinds
		want  []string
	}{
		{"endpoints only", registry.EndpointsEvents, []string{"endpoints a.example", "service other", "endpoints b.example"}},
		{"services and workloads", registry.ServiceEvents | registry.WorkloadEvents,
			[]string{"service a", "workload pod-a", "workload pod-b", "service b", "service other"}},
		{"all", registry.AllEvents, every},
		{"none", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n registry.Notifier
				sel := &selectiveRecorder{takes: tt.takes}
				plain := &kindRecorder{}
				defer n.Subscribe(sel, initial)()
				defer n.Subscribe(plain, initial)()
				for _, ev := range changes {
					n.Notify(ev)
				}
				synctest.Wait()
				if got := sel.list(); !slices.Equal(got, tt.want) {
					t.Errorf("selective handler got %q, want %q", got, tt.want)
				}
				if got := plain.list(); !slices.Equal(got, every) {
					t.Errorf("handler that is not Selective got %q, want every event %q", got, every)
				}
				if !n.Delivered(n.Mark()) {
					t.Error("Delivered is false once every handler has every event it takes")
				}
			})
		})
	}
}

// gatewayKindRecorder is a kindRecorder that also takes gateway events.
type gatewayKindRecorder struct{ kindRecorder }

func (r *gatewayKindRecorder) OnNetworkGateways(e registry.NetworkGatewaysEvent) {
	r.add(fmt.Sprintf("gateways %d", len(e.Gateways)))
}

// Gateway events reach GatewayHandlers in order with the other events,
// the initial one after the initial workloads.
func TestNotifierGatewayEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		initial := []registry.Event{
			registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Name: "pod-a"}, Initial: true},
			registry.NetworkGatewaysEvent{Gateways: make([]model.NetworkGateway, 2), Initial: true},
		}
		gh := &gatewayKindRecorder{}
		plain := &kindRecorder{}
		defer n.Subscribe(gh, initial)()
		defer n.Subscribe(plain, initial)()
		n.Notify(registry.NetworkGatewaysEvent{})
		n.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: "b"}})
		synctest.Wait()
		if got, want := gh.list(), []string{"workload pod-a", "gateways 2", "gateways 0", "service b"}; !slices.Equal(got, want) {
			t.Errorf("gateway handler got %q, want %q", got, want)
		}
		if got, want := plain.list(), []string{"workload pod-a", "service b"}; !slices.Equal(got, want) {
			t.Errorf("plain handler got %q, want %q", got, want)
		}
	})
}

// Events a subscriber does not take do not hold back Delivered for it:
// with its handler blocked in an event it takes, a mark before that event
// is delivered, one after it is not, whatever came between.
func TestNotifierSelectiveDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n registry.Notifier
		release := make(chan struct{})
		h := registry.HandlerFuncs{EndpointsFunc: func(registry.EndpointsEvent) { <-release }}
		defer n.Subscribe(h, nil)()
		n.Notify(registry.WorkloadEvent{Type: model.EventAdd, Current: &model.WorkloadInstance{Name: "w"}})
		beforeBlock := n.Mark()
		n.Notify(registry.EndpointsEvent{})
		n.Notify(registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{Name: "s"}})
		synctest.Wait()
		if !n.Delivered(beforeBlock) {
			t.Error("a workload event the handler does not take holds back Delivered")
		}
		if n.Delivered(n.Mark()) {
			t.Error("Delivered is true while the handler is still in an endpoints event")
		}
		close(release)
		synctest.Wait()
		if !n.Delivered(n.Mark()) {
			t.Error("Delivered is false once the handler returned")
		}
	})
}
