package kube

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/meshreg/meshreg/model"
)

func ptrTo[T any](v T) *T { return &v }

func networkGatewayObj(name, network string, addrs []gatewayv1.GatewaySpecAddress, listeners ...gatewayv1.Listener) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "istio-system", Name: name},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "istio", Addresses: addrs, Listeners: listeners},
	}
	if network != "" {
		gw.Labels = map[string]string{labelNetwork: network}
	}
	return gw
}

func ipAddr(v string) gatewayv1.GatewaySpecAddress {
	return gatewayv1.GatewaySpecAddress{Type: ptrTo(gatewayv1.IPAddressType), Value: v}
}

func tlsListener(port gatewayv1.PortNumber, options map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue) gatewayv1.Listener {
	mode := gatewayv1.TLSModePassthrough
	return gatewayv1.Listener{Name: "tls", Port: port, Protocol: gatewayv1.TLSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{Mode: &mode, Options: options}}
}

// servedGatewayAPI is a fake Gateway API client whose discovery lists v1
// Gateways.
func servedGatewayAPI(objs ...*gatewayv1.Gateway) *gatewayfake.Clientset {
	c := gatewayfake.NewSimpleClientset()
	for _, o := range objs {
		// By resource: the scheme knows the type under v1beta1 too.
		if err := c.Tracker().Create(gatewayv1.SchemeGroupVersion.WithResource("gateways"), o, o.Namespace); err != nil {
			panic(err)
		}
	}
	c.Resources = []*metav1.APIResourceList{{
		GroupVersion: gatewayAPIGroupVersion,
		APIResources: []metav1.APIResource{{Name: "gateways", Namespaced: true, Kind: "Gateway"}},
	}}
	return c
}

func TestControllerGatewayAPI(t *testing.T) {
	gc := servedGatewayAPI(networkGatewayObj("eastwest", "net-a", []gatewayv1.GatewaySpecAddress{ipAddr("1.1.1.1")}, tlsListener(15443, nil)))
	c := startController(t, newFakeCluster(), Options{ClusterID: "c1", GatewayClient: gc})
	want := []model.NetworkGateway{{Network: "net-a", Cluster: "c1", Address: "1.1.1.1", Port: 15443, ServiceAccount: "istio-system/eastwest", Source: model.GatewayFromGateway}}
	waitFor(t, "the Gateway's gateway", func() bool { return cmp.Equal(c.NetworkGateways(), want) })

	gvr := gatewayv1.SchemeGroupVersion.WithResource("gateways")
	moved := networkGatewayObj("eastwest", "net-a", []gatewayv1.GatewaySpecAddress{ipAddr("1.1.1.2")},
		tlsListener(16000, map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{listenerModeOption: listenerModeAutoPassthrough}))
	mustNot(t, gc.Tracker().Update(gvr, moved, "istio-system"))
	want[0].Address, want[0].Port = "1.1.1.2", 16000
	waitFor(t, "the changed Gateway's gateway", func() bool { return cmp.Equal(c.NetworkGateways(), want) })

	mustNot(t, gc.Tracker().Delete(gvr, "istio-system", "eastwest"))
	waitFor(t, "no gateway once the Gateway is deleted", func() bool { return len(c.NetworkGateways()) == 0 })
}

// Without the Gateway API served, a controller with a Gateway client
// runs, and reads no Gateways.
func TestControllerGatewayAPINotServed(t *testing.T) {
	gc := gatewayfake.NewSimpleClientset()
	mustNot(t, gc.Tracker().Create(gatewayv1.SchemeGroupVersion.WithResource("gateways"),
		networkGatewayObj("eastwest", "net-a", []gatewayv1.GatewaySpecAddress{ipAddr("1.1.1.1")}, tlsListener(15443, nil)), "istio-system"))
	c := startController(t, newFakeCluster(), Options{GatewayClient: gc})
	if got := c.NetworkGateways(); len(got) != 0 {
		t.Errorf("gateways from an unserved API: %v", got)
	}
}

func TestGatewayAPIGatewaysRemoteClass(t *testing.T) {
	gw := networkGatewayObj("remote", "net-r", []gatewayv1.GatewaySpecAddress{ipAddr("3.3.3.3")}, tlsListener(15443, nil))
	gw.Spec.GatewayClassName = model.GatewayClassRemote
	lean, _ := convertGateway(gw, "c1")
	if got := gatewayAPIGateways(lean, false); len(got) != 0 {
		t.Errorf("an istio-remote Gateway outside the config cluster: %v", got)
	}
	got := gatewayAPIGateways(lean, true)
	if len(got) != 1 || got[0].ServiceAccount != "istio-system/remote-istio-remote" {
		t.Errorf("in the config cluster: %v", got)
	}
}

// A failing discovery request: the controller runs, reads no Gateways,
// and says why.
func TestControllerGatewayAPIDiscoveryFails(t *testing.T) {
	gc := gatewayfake.NewSimpleClientset()
	gc.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	c := startController(t, newFakeCluster(), Options{GatewayClient: gc})
	ds := c.Diagnostics()
	if len(ds) != 1 || ds[0].Kind != "Gateway" || !strings.Contains(ds[0].Message, "forbidden") {
		t.Errorf("diagnostics %v, want one saying the Gateway API could not be looked for", ds)
	}
}

// A hostile tenant declares itself a gateway of another network, with a
// labelled LoadBalancer Service and a labelled Gateway: with
// GatewayNamespaces naming the system namespace, neither is a gateway,
// and each is reported; the system namespace's own gateway stands.
func TestGatewayNamespacesKeepTenantsOut(t *testing.T) {
	tenant := withIngress(gatewaySvc("grab", "net-victim", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)), corev1.LoadBalancerIngress{IP: "198.51.100.66"})
	tenant.Namespace = "tenant"
	own := withIngress(gatewaySvc("eastwest", "net-victim", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)), corev1.LoadBalancerIngress{IP: "203.0.113.1"})
	gwObj := networkGatewayObj("grab-gw", "net-victim", []gatewayv1.GatewaySpecAddress{ipAddr("198.51.100.67")}, tlsListener(15443, nil))
	gwObj.Namespace = "tenant"
	for _, tt := range []struct {
		name       string
		namespaces []string
		want       string
	}{
		{"every namespace, as Istio", nil, "net-victim/c1/198.51.100.66:15443 net-victim/c1/198.51.100.67:15443 net-victim/c1/203.0.113.1:15443"},
		{"the system namespace", []string{"istio-system"}, "net-victim/c1/203.0.113.1:15443"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := startController(t, newFakeCluster(tenant, own), Options{ClusterID: "c1", GatewayNamespaces: tt.namespaces, GatewayClient: servedGatewayAPI(gwObj)})
			var got []string
			waitFor(t, "the gateways", func() bool {
				got = got[:0]
				for _, g := range c.NetworkGateways() {
					got = append(got, g.String())
				}
				return strings.Join(got, " ") == tt.want
			})
			var reported []string
			for _, d := range c.Diagnostics() {
				if d.Namespace == "tenant" && strings.Contains(d.Message, "GatewayNamespaces") {
					reported = append(reported, d.Kind+"/"+d.Name)
				}
			}
			if wantReported := tt.namespaces != nil; wantReported != (strings.Join(reported, " ") == "Gateway/grab-gw Service/grab") {
				t.Errorf("diagnostics about the tenant: %v", reported)
			}
		})
	}
}
