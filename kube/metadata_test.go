package kube

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/meshreg/meshreg/model"
)

// The controller publishes its cluster's network, every namespace (its
// labels and the annotations consumers read) and, with a Gateway API
// client, every Gateway with its class's labels and annotations; each
// follows its object's changes.
func TestControllerPublishesMetadata(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system", Labels: map[string]string{labelNetwork: "net1"}}}
	app := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{"istio.io/use-waypoint": "wp"},
		Annotations: map[string]string{model.AnnotationWaypointCanaryWeight: "10", "other": "x"}}}
	f := newFakeCluster(ns, app)
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "istio-waypoint", Labels: map[string]string{"istio.io/waypoint-for": "all"}}}
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "wp", Annotations: map[string]string{lastAppliedAnnotation: "{}", "kept": "y"}},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "istio-waypoint", Listeners: []gatewayv1.Listener{{Name: "mesh", Port: 15008, Protocol: "HBONE",
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptrTo(gatewayv1.NamespacesFromSelector),
				Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}}}}}},
		Status: gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Type: ptrTo(gatewayv1.IPAddressType), Value: "10.0.0.9"}}},
	}
	gc := gatewayfake.NewSimpleClientset()
	mustNot(t, gc.Tracker().Create(gatewayv1.SchemeGroupVersion.WithResource("gatewayclasses"), class, ""))
	mustNot(t, gc.Tracker().Create(gatewayv1.SchemeGroupVersion.WithResource("gateways"), gw, "app"))
	gc.Resources = []*metav1.APIResourceList{{GroupVersion: gatewayAPIGroupVersion, APIResources: []metav1.APIResource{
		{Name: "gateways", Namespaced: true, Kind: "Gateway"}, {Name: "gatewayclasses", Kind: "GatewayClass"}}}}
	c := startController(t, f, Options{ClusterID: "c1", GatewayClient: gc})
	waitFor(t, "the gateway watches", func() bool { return len(c.Gateways()) == 1 })

	if got := c.Clusters(); len(got) != 1 || got[0] != (model.Cluster{ID: "c1", Network: "net1"}) {
		t.Errorf("Clusters() = %v, want c1 on net1", got)
	}
	var appNS *model.Namespace
	for _, n := range c.Namespaces() {
		if n.Name == "app" {
			appNS = n
		}
	}
	if appNS == nil || appNS.Cluster != "c1" || appNS.Labels["istio.io/use-waypoint"] != "wp" ||
		!maps.Equal(appNS.Annotations, map[string]string{model.AnnotationWaypointCanaryWeight: "10"}) {
		t.Errorf("namespace app = %+v, want its labels and the canary weight annotation alone", appNS)
	}
	got := c.Gateways()[0]
	if got.Cluster != "c1" || got.Class != "istio-waypoint" || got.ClassLabels["istio.io/waypoint-for"] != "all" ||
		!maps.Equal(got.Annotations, map[string]string{"kept": "y"}) || len(got.StatusAddresses) != 1 ||
		got.Listeners[0].AllowedRoutes.From != model.FromSelector || got.Listeners[0].AllowedRoutes.Selector != nil {
		t.Errorf("gateway = %+v", got)
	}
	var diag bool
	for _, d := range c.Diagnostics() {
		diag = diag || d.Kind == "Gateway" && d.Name == "wp" && strings.Contains(d.Message, "selects no namespace")
	}
	if !diag {
		t.Errorf("no diagnostic for the invalid allowedRoutes selector in %v", c.Diagnostics())
	}

	// The class's labels change: the Gateway is published again.
	class.Labels = map[string]string{"istio.io/waypoint-for": "service"}
	mustNot(t, gc.Tracker().Update(gatewayv1.SchemeGroupVersion.WithResource("gatewayclasses"), class, ""))
	waitFor(t, "the class's new label on the Gateway", func() bool {
		return c.Gateways()[0].ClassLabels["istio.io/waypoint-for"] == "service"
	})
	// The system namespace's network changes, the namespace goes, the
	// Gateway goes.
	ns.Labels = map[string]string{labelNetwork: "net2"}
	_, err := f.CoreV1().Namespaces().Update(t.Context(), ns, metav1.UpdateOptions{})
	mustNot(t, err)
	waitFor(t, "the cluster on net2", func() bool { return c.Clusters()[0].Network == "net2" })
	mustNot(t, f.CoreV1().Namespaces().Delete(t.Context(), "app", metav1.DeleteOptions{}))
	waitFor(t, "namespace app gone", func() bool { return len(c.Namespaces()) == 1 })
	mustNot(t, gc.Tracker().Delete(gatewayv1.SchemeGroupVersion.WithResource("gateways"), "app", "wp"))
	waitFor(t, "the Gateway gone", func() bool { return len(c.Gateways()) == 0 })
	for _, d := range c.Diagnostics() {
		if d.Kind == "Gateway" && d.Name == "wp" {
			t.Errorf("diagnostic of a deleted Gateway left: %v", d)
		}
	}
}
