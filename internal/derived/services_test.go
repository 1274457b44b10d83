package derived_test

import (
	"testing"

	"github.com/meshreg/meshreg/internal/derived"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// A service's mark keeps the latest service and endpoints its events
// carried; a delete leaves the service nil, marked.
func TestServiceMarks(t *testing.T) {
	svc := &model.Service{Namespace: "ns", Hostname: "a.ns.svc.cluster.local"}
	eps := []*model.Endpoint{{Port: 80}}
	m := derived.ServiceMarks{}
	m.OnEndpoints(registry.EndpointsEvent{Service: svc.Key(), Endpoints: eps[:0], All: eps})
	m.OnService(registry.ServiceEvent{Type: model.EventAdd, Current: svc})
	sm := m[svc.Key()]
	if !sm.Service || sm.Svc != svc || !sm.Endpoints || len(sm.Eps) != 1 {
		t.Errorf("after an add and endpoints: %+v", sm)
	}
	m.OnService(registry.ServiceEvent{Type: model.EventDelete, Previous: svc})
	if sm := m[svc.Key()]; !sm.Service || sm.Svc != nil || len(sm.Eps) != 1 || len(m) != 1 {
		t.Errorf("after the delete: %+v (%d marks)", sm, len(m))
	}
}
