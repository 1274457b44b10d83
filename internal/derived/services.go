package derived

import (
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// ServiceMark is what the events of a batch said of one service: the
// service as the latest service event left it (nil once deleted), and
// its endpoints as the latest endpoints event carried them (every
// shard's, registry.EndpointsEvent.All).
type ServiceMark struct {
	// Service says a service event came; Svc is then its service.
	Service bool
	Svc     *model.Service
	// Endpoints says an endpoints event came; Eps are then its
	// endpoints.
	Endpoints bool
	Eps       []*model.Endpoint
}

// ServiceMarks are a batch's service marks, by key: the part of a view's
// marks both views keep alike.
type ServiceMarks map[model.ServiceKey]ServiceMark

// OnService records a service event.
func (m ServiceMarks) OnService(e registry.ServiceEvent) {
	key := e.Service().Key()
	sm := m[key]
	sm.Service, sm.Svc = true, e.Current
	m[key] = sm
}

// OnEndpoints records an endpoints event.
func (m ServiceMarks) OnEndpoints(e registry.EndpointsEvent) {
	sm := m[e.Service]
	sm.Endpoints, sm.Eps = true, e.All
	m[e.Service] = sm
}
