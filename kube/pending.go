package kube

import (
	"fmt"
	"strings"

	"github.com/meshreg/meshreg/model"
)

// pendingDiagnostic reports an endpoint withheld until its pod arrives.
func pendingDiagnostic(ns string, se *sliceEndpoint, cluster model.ClusterID) model.Diagnostic {
	return model.Diagnostic{
		Severity: model.Warning, Kind: "EndpointSlice", Namespace: ns, Name: se.slice, Cluster: cluster,
		Message: fmt.Sprintf("endpoint %s"+pendingMarker+"pod %s is not known yet; withheld until it arrives", se.addresses[0], se.pod),
	}
}

// pendingMarker is in the message of every pending endpoint's diagnostic,
// and of no other, so that pendingEndpoints can count them.
const pendingMarker = " pending: "

// pendingEndpoints counts the endpoints withheld until their pod is
// known, from their diagnostics (for the metrics).
func (c *Controller) pendingEndpoints() int {
	n := 0
	for _, d := range c.store.Diagnostics() {
		if d.Kind == "EndpointSlice" && strings.Contains(d.Message, pendingMarker) {
			n++
		}
	}
	return n
}
