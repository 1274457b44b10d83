package registry_test

import (
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestHandlerFuncsIgnoresNilFuncs(t *testing.T) {
	events := []registry.Event{
		registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{}},
		registry.EndpointsEvent{},
		registry.WorkloadEvent{Type: model.EventDelete, Previous: &model.WorkloadInstance{}},
	}
	// No function set: every event is ignored, none panics.
	for _, e := range events {
		e.Deliver(registry.HandlerFuncs{})
	}
	// Each function receives only its own kind.
	var got []string
	h := registry.HandlerFuncs{
		ServiceFunc:   func(registry.ServiceEvent) { got = append(got, "service") },
		EndpointsFunc: func(registry.EndpointsEvent) { got = append(got, "endpoints") },
		WorkloadFunc:  func(registry.WorkloadEvent) { got = append(got, "workload") },
	}
	for _, e := range events {
		e.Deliver(h)
	}
	if want := []string{"service", "endpoints", "workload"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("delivered to %v, want %v", got, want)
	}
	got = nil
	only := registry.HandlerFuncs{EndpointsFunc: func(registry.EndpointsEvent) { got = append(got, "endpoints") }}
	for _, e := range events {
		e.Deliver(only)
	}
	if len(got) != 1 || got[0] != "endpoints" {
		t.Errorf("with only EndpointsFunc set, delivered to %v", got)
	}
}

func TestEventSubjects(t *testing.T) {
	prev, cur := &model.Service{Name: "prev"}, &model.Service{Name: "cur"}
	tests := []struct {
		e    registry.ServiceEvent
		want *model.Service
	}{
		{registry.ServiceEvent{Type: model.EventAdd, Current: cur}, cur},
		{registry.ServiceEvent{Type: model.EventUpdate, Previous: prev, Current: cur}, cur},
		{registry.ServiceEvent{Type: model.EventDelete, Previous: prev}, prev},
	}
	for _, tt := range tests {
		if got := tt.e.Service(); got != tt.want {
			t.Errorf("%s event: Service() = %v, want %v", tt.e.Type, got.Name, tt.want.Name)
		}
	}
	wp, wc := &model.WorkloadInstance{Name: "prev"}, &model.WorkloadInstance{Name: "cur"}
	if got := (registry.WorkloadEvent{Type: model.EventDelete, Previous: wp}).Workload(); got != wp {
		t.Errorf("delete: Workload() = %v, want the previous workload", got)
	}
	if got := (registry.WorkloadEvent{Type: model.EventUpdate, Previous: wp, Current: wc}).Workload(); got != wc {
		t.Errorf("update: Workload() = %v, want the current workload", got)
	}
}

func TestEndpointQueryMatches(t *testing.T) {
	ep := &model.Endpoint{ServicePortName: "http", Cluster: "c1"}
	tests := []struct {
		q    registry.EndpointQuery
		want bool
	}{
		{registry.EndpointQuery{}, true},
		{registry.EndpointQuery{Port: "http"}, true},
		{registry.EndpointQuery{Port: "grpc"}, false},
		{registry.EndpointQuery{Cluster: "c1"}, true},
		{registry.EndpointQuery{Cluster: "c2"}, false},
		{registry.EndpointQuery{Port: "http", Cluster: "c1"}, true},
		{registry.EndpointQuery{Port: "http", Cluster: "c2"}, false},
	}
	for _, tt := range tests {
		if got := tt.q.Matches(ep); got != tt.want {
			t.Errorf("%+v.Matches(http@c1) = %v, want %v", tt.q, got, tt.want)
		}
	}
}
