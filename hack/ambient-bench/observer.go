package main

// How the benchmark sees the index publish a change. The ambient index tells
// istiod's DiscoveryServer about every change of its workloads and services
// through the XDSUpdater it is given (ambient.Options.XDSUpdater): the krt
// handlers registered on the Workloads and Services collections call
// ConfigUpdate with the changed addresses' resource names
// (PushRequest.AddressesUpdated: a workload's UID, a service's
// "namespace/hostname") once the collection holds the new state; this is what
// starts a WDS push in istiod. The observer is that XDSUpdater: it forwards
// every call to an endpoint index updater (what the DiscoveryServer does
// with EDS updates), counts the calls, and wakes the benchmark when an address
// it watches is updated. The benchmark then reads the index (Lookup) to check
// that the published state is the one it waits for.

import (
	"sync"
	"sync/atomic"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/util/sets"
)

type observer struct {
	inner model.XDSUpdater
	calls atomic.Int64 // every call into the updater, to tell when the index is quiet

	mu      sync.Mutex
	watched sets.String   // addresses (resource names) whose update wakes the benchmark
	wake    chan struct{} // capacity 1: a pending wake-up is never lost
}

var _ model.XDSUpdater = &observer{}

func newObserver(inner model.XDSUpdater) *observer {
	return &observer{inner: inner, wake: make(chan struct{}, 1)}
}

// watch replaces the watched addresses and drops a pending wake-up.
func (o *observer) watch(keys ...string) {
	o.mu.Lock()
	o.watched = sets.New(keys...)
	select {
	case <-o.wake:
	default:
	}
	o.mu.Unlock()
}

func (o *observer) ConfigUpdate(r *model.PushRequest) {
	o.calls.Add(1)
	o.mu.Lock()
	hit := false
	for k := range o.watched {
		if r.AddressesUpdated.Contains(k) {
			hit = true
			break
		}
	}
	o.mu.Unlock()
	if hit {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
	o.inner.ConfigUpdate(r)
}

func (o *observer) EDSUpdate(s model.ShardKey, h, ns string, eps []*model.IstioEndpoint) {
	o.calls.Add(1)
	o.inner.EDSUpdate(s, h, ns, eps)
}

func (o *observer) EDSCacheUpdate(s model.ShardKey, h, ns string, eps []*model.IstioEndpoint) {
	o.calls.Add(1)
	o.inner.EDSCacheUpdate(s, h, ns, eps)
}

func (o *observer) SvcUpdate(s model.ShardKey, h, ns string, e model.Event) {
	o.calls.Add(1)
	o.inner.SvcUpdate(s, h, ns, e)
}

func (o *observer) ProxyUpdate(id cluster.ID, ip string) {
	o.calls.Add(1)
	o.inner.ProxyUpdate(id, ip)
}

func (o *observer) RemoveShard(s model.ShardKey) {
	o.calls.Add(1)
	o.inner.RemoveShard(s)
}

func (o *observer) PruneShard(s model.ShardKey, keep map[string]sets.String) {
	o.calls.Add(1)
	o.inner.PruneShard(s, keep)
}
