package kube

import "github.com/meshreg/meshreg/model"

// Network returns the cluster's network: Options.Network, else the
// topology.istio.io/network label of the system namespace; "" when
// neither is set. The controller's Services select another cluster's
// WorkloadEntry only when the entry is on no network or on this one.
func (c *Controller) Network() model.NetworkID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.net.cluster
}

// Settled reports whether every change applied so far has reached the
// subscribers. WorkloadEntries handed in through HandleWorkload are
// applied before it returns, so this is all the aggregate needs to wait
// for before it reports synced.
func (c *Controller) Settled() bool { return c.store.Idle() }
