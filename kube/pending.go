package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// pendingDiagnostic reports an endpoint withheld until its pod arrives.
func pendingDiagnostic(ns string, se *sliceEndpoint, cluster model.ClusterID) model.Diagnostic {
	return model.Diagnostic{
		Severity: model.Warning, Kind: "EndpointSlice", Namespace: ns, Name: se.slice, Cluster: cluster,
		Message: fmt.Sprintf("endpoint %s pending: pod %s is not known yet; withheld until it arrives", se.addresses[0], se.pod),
	}
}

// setPending records how many endpoints of a service are withheld until
// their pod is known, as its diagnostics are written (0 when it is
// deleted), and keeps the total the metrics read. Only the worker calls
// it.
func (c *Controller) setPending(key types.NamespacedName, n int) {
	old := c.pendingBy[key]
	if n == old {
		return
	}
	if n == 0 {
		delete(c.pendingBy, key)
	} else {
		c.pendingBy[key] = n
	}
	c.pending.Add(int64(n - old))
}

// pendingEndpoints is the number of endpoints withheld until their pod
// is known (for the metrics); safe for concurrent use.
func (c *Controller) pendingEndpoints() int { return int(c.pending.Load()) }
