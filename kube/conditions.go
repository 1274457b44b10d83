package kube

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshreg/meshreg/model"
)

// conditions are an EndpointSlice endpoint's conditions, each unset,
// false or true.
type conditions struct {
	ready, serving, terminating tristate
}

// tristate is an optional bool.
type tristate uint8

const (
	unset tristate = iota
	isFalse
	isTrue
)

func newTristate(b *bool) tristate {
	switch {
	case b == nil:
		return unset
	case *b:
		return isTrue
	}
	return isFalse
}

// or returns the value, or def when unset.
func (t tristate) or(def bool) bool {
	if t == unset {
		return def
	}
	return t == isTrue
}

func newConditions(c discoveryv1.EndpointConditions) conditions {
	return conditions{ready: newTristate(c.Ready), serving: newTristate(c.Serving), terminating: newTristate(c.Terminating)}
}

// endpointState is what an endpoint's slice conditions say of it: its
// health and whether it serves (model.Endpoint's Health and Serving).
type endpointState struct {
	health  model.HealthStatus
	serving bool
}

// endpointHealth maps EndpointSlice conditions to an endpoint's state as
// Istio maps them:
//
//   - ready (or unset) → Healthy;
//   - else, for a service that drains its endpoints (draining: it carries
//     a persistent-session label, see Options.DrainingLabels), serving
//     and terminating → Draining;
//   - else terminating → Terminating;
//   - else Unhealthy.
//
// An unset serving or terminating condition counts as set here, as in
// Istio: a not-ready endpoint whose terminating condition is unset is
// Terminating, and only terminating: false makes it Unhealthy. Serving
// is the serving condition as the API defines it (unset: as ready).
func endpointHealth(c conditions, draining bool) endpointState {
	ready := c.ready.or(true)
	st := endpointState{health: model.Unhealthy, serving: c.serving.or(ready)}
	switch {
	case ready:
		st.health = model.Healthy
	case draining && c.serving.or(true) && c.terminating.or(true):
		st.health = model.Draining
	case c.terminating.or(true):
		st.health = model.Terminating
	}
	return st
}
