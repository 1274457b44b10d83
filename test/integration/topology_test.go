//go:build integration

package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
)

// TestTopologyHintsFromTheEndpointSliceController: for a Service with
// trafficDistribution PreferClose over nodes in two zones, Kubernetes' own
// EndpointSlice controller writes each endpoint a hint for its zone; the
// registry carries them and the distribution, and the proxy view applies
// both: failover priorities by zone, and with TopologyHints only the
// proxy's zone.
func TestTopologyHintsFromTheEndpointSliceController(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-topology"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-a", "region-1", "zone-a")
	mkNode(t, ctx, "node-b", "region-1", "zone-b")
	prefer := corev1.ServiceTrafficDistributionPreferClose
	_, err := env.kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "near", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "near"}, TrafficDistribution: &prefer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	must(t, err)
	for i, node := range []string{"node-a", "node-b", "node-a", "node-b"} {
		mkPod(t, ctx, ns, fmt.Sprintf("near-%d", i), node, fmt.Sprintf("10.210.0.%d", i+1), map[string]string{"app": "near"}, true)
	}
	c := runKube(t, env.kube, kube.Options{ClusterID: "it"})
	key := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("near", ns, "cluster.local")}
	eventually(t, time.Minute, "four endpoints hinted for their zones", func() (bool, string) {
		eps := c.Endpoints(key, registry.EndpointQuery{})
		if len(eps) != 4 {
			return false, fmt.Sprintf("%d endpoints", len(eps))
		}
		for _, ep := range eps {
			if ep.Hints == nil || !slices.Equal(ep.Hints.ForZones, []string{ep.Locality.Zone}) {
				return false, fmt.Sprintf("endpoint %s in %s has hints %+v", ep.Address(), ep.Locality, ep.Hints)
			}
		}
		return true, ""
	})
	if svc := c.ServiceByKey(key); svc.TrafficDistribution != model.TrafficPreferSameZone {
		t.Errorf("traffic distribution = %q, want PreferSameZone", svc.TrafficDistribution)
	}

	// The proxy's view: a proxy in zone-a.
	proxy := &proxyview.Proxy{Namespace: ns, Cluster: "it", Locality: model.Locality{Region: "region-1", Zone: "zone-a"}}
	for _, hints := range []bool{false, true} {
		v, err := proxyview.New(c, proxyview.Options{TopologyHints: hints})
		must(t, err)
		vctx, vcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- v.Run(vctx) }()
		eventually(t, time.Minute, "the view to sync", func() (bool, string) {
			return v.HasSynced() && v.Snapshot().Len() > 0, "not synced"
		})
		got := map[string]uint32{} // zone -> priority
		n := 0
		for _, le := range v.Snapshot().Endpoints(proxy, key, "http") {
			got[le.Locality.Zone] = le.Priority
			n += len(le.Endpoints)
		}
		vcancel()
		must(t, <-done)
		switch {
		case hints && (n != 2 || len(got) != 1 || got["zone-a"] != 0):
			t.Errorf("with TopologyHints: %d endpoints, priorities by zone %v; want zone-a's two", n, got)
		case !hints && (n != 4 || got["zone-a"] != 0 || got["zone-b"] != 1):
			t.Errorf("without TopologyHints: %d endpoints, priorities by zone %v; want four, zone-a first", n, got)
		}
	}
}
