package kube

import (
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestMergeSlicesReportsPortsOutOfRange is the regression test of a silent
// drop found by the reliability tier's bad-input catalogue: a slice port
// numbered outside 1-65535 was skipped without a word, so its endpoints
// vanished from the service (ARCHITECTURE.md decision 5: diagnostics instead of
// silence). A port left unset stays silent: the API gives it a meaning.
func TestMergeSlicesReportsPortsOutOfRange(t *testing.T) {
	for _, n := range []int32{-5, 0, 65536} {
		s := slice("s1", 0, discoveryv1.AddressTypeIPv4, podEP("10.0.0.1", "p1", true))
		s.Ports = []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(n)}, {Name: ptr("unset")}}
		eps, diags := mergeAPISlices([]*discoveryv1.EndpointSlice{s}, "c1")
		if len(eps) != 1 || len(eps[0].ports) != 0 {
			t.Errorf("port %d: endpoints %+v, want one with no usable port", n, eps)
		}
		if len(diags) != 1 || !strings.Contains(diags[0].Message, "out of range") || diags[0].Name != "s1" {
			t.Errorf("port %d: diagnostics %+v, want one saying the port is out of range", n, diags)
		}
	}
}
