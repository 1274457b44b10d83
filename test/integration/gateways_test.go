//go:build integration

package integration

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
)

// gatewaysString renders gateways for comparison and failure messages.
func gatewaysString(gws []model.NetworkGateway) string {
	var out []string
	for _, g := range gws {
		out = append(out, g.String())
	}
	return strings.Join(out, " ")
}

// TestGatewayFromLoadBalancerStatus: a Service labelled with a network
// becomes a network gateway when its LoadBalancer status, written
// through the status subresource, gives it an address, and stops being
// one when the status is cleared.
func TestGatewayFromLoadBalancerStatus(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-gateway-lb"
	mkNamespace(t, ctx, ns, nil)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eastwest", Labels: map[string]string{"topology.istio.io/network": "net-it"}},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "tls", Port: 15443}, {Name: "hbone", Port: 15008}},
		},
	}
	created, err := env.kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	must(t, err)
	c := runKube(t, env.kube, kube.Options{ClusterID: "it"})
	hasDiag := func() bool {
		return slices.ContainsFunc(c.Diagnostics(), func(d model.Diagnostic) bool {
			return d.Namespace == ns && d.Name == "eastwest" && strings.Contains(d.Message, "has no address")
		})
	}
	eventually(t, time.Minute, "the pending gateway's diagnostic", func() (bool, string) {
		return hasDiag() && len(c.NetworkGateways()) == 0, gatewaysString(c.NetworkGateways())
	})

	created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.10"}, {Hostname: "gw.it.example.com"}}
	created, err = env.kube.CoreV1().Services(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	must(t, err)
	want := "net-it/it/203.0.113.10:15443+hbone:15008 net-it/it/gw.it.example.com:15443+hbone:15008"
	eventually(t, time.Minute, "the gateway at the LoadBalancer's addresses", func() (bool, string) {
		got := gatewaysString(c.NetworkGateways())
		return got == want && !hasDiag(), got
	})

	created.Status.LoadBalancer.Ingress = nil
	_, err = env.kube.CoreV1().Services(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	must(t, err)
	eventually(t, time.Minute, "the gateway withdrawn with its addresses", func() (bool, string) {
		return len(c.NetworkGateways()) == 0 && hasDiag(), gatewaysString(c.NetworkGateways())
	})
}

// TestGatewayFromGatewayAPI: with the Gateway CRD absent, a controller
// given a Gateway client runs and reads none; once the CRD is installed
// (from the gateway-api module's manifests), a network-labelled Gateway
// is a gateway, and follows its changes.
func TestGatewayFromGatewayAPI(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	gc, err := gatewayclient.NewForConfig(env.cfg)
	must(t, err)
	opts := kube.Options{ClusterID: "it", GatewayClient: gc}
	before := runKube(t, env.kube, opts)
	if got := before.NetworkGateways(); len(got) != 0 {
		t.Fatalf("gateways without the Gateway API: %v", got)
	}

	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	must(t, err)
	_, err = envtest.InstallCRDs(env.cfg, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_gateways.yaml")},
		ErrorIfPathMissing: true,
	})
	must(t, err)

	const ns = "it-gateway-api"
	mkNamespace(t, ctx, ns, nil)
	ip := gatewayv1.IPAddressType
	mode := gatewayv1.TLSModePassthrough
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "eastwest", Labels: map[string]string{"topology.istio.io/network": "net-api"}},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "istio",
			Addresses:        []gatewayv1.GatewaySpecAddress{{Type: &ip, Value: "203.0.113.20"}},
			Listeners: []gatewayv1.Listener{{
				Name: "tls-passthrough", Port: 15443, Protocol: gatewayv1.TLSProtocolType,
				TLS: &gatewayv1.ListenerTLSConfig{Mode: &mode},
			}},
		},
	}
	gw, err = gc.GatewayV1().Gateways(ns).Create(ctx, gw, metav1.CreateOptions{})
	must(t, err)

	c := runKube(t, env.kube, opts)
	eventually(t, time.Minute, "the Gateway's gateway", func() (bool, string) {
		got := c.NetworkGateways()
		return gatewaysString(got) == "net-api/it/203.0.113.20:15443" && got[0].ServiceAccount == ns+"/eastwest", gatewaysString(got)
	})
	gw.Spec.Addresses[0].Value = "203.0.113.21"
	_, err = gc.GatewayV1().Gateways(ns).Update(ctx, gw, metav1.UpdateOptions{})
	must(t, err)
	eventually(t, time.Minute, "the changed Gateway's gateway", func() (bool, string) {
		got := gatewaysString(c.NetworkGateways())
		return got == "net-api/it/203.0.113.21:15443", got
	})
	must(t, gc.GatewayV1().Gateways(ns).Delete(ctx, "eastwest", metav1.DeleteOptions{}))
	eventually(t, time.Minute, "no gateway once the Gateway is deleted", func() (bool, string) {
		return len(c.NetworkGateways()) == 0, gatewaysString(c.NetworkGateways())
	})
}
