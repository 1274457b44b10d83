package kube

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func TestControllerInitialSync(t *testing.T) {
	f := newFakeCluster(
		svcObj("default", "reviews", "10.96.0.10", map[string]string{"app": "reviews"}, svcPort("http", 9080)),
		sliceObj("default", "reviews-abc", "reviews", discoveryv1.AddressTypeIPv4, 9080,
			sliceEP{"10.1.0.1", "reviews-1", true}, sliceEP{"10.1.0.2", "reviews-2", false}),
		podObj("default", "reviews-1", "10.1.0.1", "node-a", map[string]string{"app": "reviews"}),
		podObj("default", "reviews-2", "10.1.0.2", "node-a", map[string]string{"app": "reviews"}),
		nodeObj("node-a", "us-east1", "us-east1-b"),
	)
	c := startController(t, f, Options{})
	eps := c.Endpoints(skey("default", "reviews"), registry.EndpointQuery{})
	if len(eps) != 2 {
		t.Fatalf("got %d endpoints, want 2:\n%s", len(eps), dump(t, c))
	}
	if eps[0].Health != model.Healthy || eps[1].Health != model.Unhealthy {
		t.Errorf("health = %v, %v; want Healthy, Unhealthy", eps[0].Health, eps[1].Health)
	}
	if got := eps[0].Locality.String(); got != "us-east1/us-east1-b" {
		t.Errorf("locality = %q", got)
	}
	if got := eps[0].ServiceAccount; got != "spiffe://cluster.local/ns/default/sa/sa-reviews-1" {
		t.Errorf("service account = %q", got)
	}
	if n := len(c.Workloads()); n != 2 {
		t.Errorf("got %d workloads, want 2", n)
	}
	_ = metav1.Now
	t.Log(dump(t, c))
}
