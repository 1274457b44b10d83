package main

import (
	"fmt"
	"os"
	"sync/atomic"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/util/sets"
)

// The XDS updater that tells the oracle when Istio is still busy, and the
// testing.TB that Istio's CRD helper needs.

// activity counts every call the ambient index makes into the XDS sink.
type activity struct{ n atomic.Int64 }

func (a *activity) bump()       { a.n.Add(1) }
func (a *activity) load() int64 { return a.n.Load() }

// countingUpdater is the index's XDSUpdater (istiod's DiscoveryServer): it keeps an
// endpoint index as the real one does and counts calls, to tell when the index settled.
type countingUpdater struct {
	inner model.XDSUpdater
	act   *activity
}

var _ model.XDSUpdater = &countingUpdater{}

func (c *countingUpdater) EDSUpdate(s model.ShardKey, h, ns string, eps []*model.IstioEndpoint) {
	c.act.bump()
	c.inner.EDSUpdate(s, h, ns, eps)
}

func (c *countingUpdater) EDSCacheUpdate(s model.ShardKey, h, ns string, eps []*model.IstioEndpoint) {
	c.act.bump()
	c.inner.EDSCacheUpdate(s, h, ns, eps)
}

func (c *countingUpdater) SvcUpdate(s model.ShardKey, h, ns string, e model.Event) {
	c.act.bump()
	c.inner.SvcUpdate(s, h, ns, e)
}

func (c *countingUpdater) ConfigUpdate(r *model.PushRequest) {
	c.act.bump()
	c.inner.ConfigUpdate(r)
}

func (c *countingUpdater) ProxyUpdate(id cluster.ID, ip string) {
	c.act.bump()
	c.inner.ProxyUpdate(id, ip)
}

func (c *countingUpdater) RemoveShard(s model.ShardKey) {
	c.act.bump()
	c.inner.RemoveShard(s)
}

func (c *countingUpdater) PruneShard(s model.ShardKey, keep map[string]sets.String) {
	c.act.bump()
	c.inner.PruneShard(s, keep)
}

// crdFailer lets us use Istio's clienttest.MakeCRD outside a test.
type crdFailer struct{}

func (crdFailer) Fail()                     { panic("MakeCRD failed") }
func (crdFailer) FailNow()                  { panic("MakeCRD failed") }
func (crdFailer) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (crdFailer) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (crdFailer) Log(...any)                {}
func (crdFailer) Logf(string, ...any)       {}
func (crdFailer) TempDir() string           { return os.TempDir() }
func (crdFailer) Helper()                   {}
func (crdFailer) Cleanup(func())            {}
func (crdFailer) Skip(...any)               {}
