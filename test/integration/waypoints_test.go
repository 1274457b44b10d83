//go:build integration

package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/kube"
)

// TestAddressIndexOverTheAPIServer runs the address index over a kube
// controller on the real API server, with the Gateway API's CRDs
// installed, the controller publishing the namespaces and Gateways: a pod of a namespace that uses a waypoint gets
// it once the Gateway has an address in its status, loses it when the
// namespace's label goes, and turns UNHEALTHY when it is no longer Ready.
func TestAddressIndexOverTheAPIServer(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	must(t, err)
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	_, err = envtest.InstallCRDs(env.cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(dir, "gateway.networking.k8s.io_gateways.yaml"),
			filepath.Join(dir, "gateway.networking.k8s.io_gatewayclasses.yaml")},
		ErrorIfPathMissing: true,
	})
	must(t, err)
	gc, err := gatewayclient.NewForConfig(env.cfg)
	must(t, err)

	const ns = "it-ambient"
	mkNamespace(t, ctx, ns, map[string]string{"istio.io/use-waypoint": "wp"})
	gw, err := gc.GatewayV1().Gateways(ns).Create(ctx, &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wp", Labels: map[string]string{"istio.io/waypoint-for": "all"}},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "istio-waypoint", Listeners: []gatewayv1.Listener{
			{Name: "mesh", Port: 15008, Protocol: "HBONE"},
		}},
	}, metav1.CreateOptions{})
	must(t, err)
	mkPod(t, ctx, ns, "app", "", "10.72.0.1", map[string]string{"app": "a"}, true)

	c := runKube(t, env.kube, kube.Options{ClusterID: "it", GatewayClient: gc})
	idx, err := address.New(c, address.Options{ConfigCluster: "it"})
	must(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- idx.Run(runCtx) }()
	defer func() {
		stop()
		for range 1 {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()

	const uid = "it//Pod/" + ns + "/app"
	workload := func() *workloadapi.Workload { return idx.Snapshot().Get(uid).GetWorkload() }
	waypoint := func() string {
		if a := workload().GetWaypoint().GetAddress(); a != nil {
			return string(a.GetAddress())
		}
		return ""
	}
	eventually(t, time.Minute, "the pod, without a waypoint while the Gateway has no address", func() (bool, string) {
		w := workload()
		return idx.HasSynced() && w != nil && w.GetWaypoint() == nil, w.String()
	})

	ip := gatewayv1.IPAddressType
	gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Type: &ip, Value: "10.96.72.1"}}
	_, err = gc.GatewayV1().Gateways(ns).UpdateStatus(ctx, gw, metav1.UpdateOptions{})
	must(t, err)
	want := string([]byte{10, 96, 72, 1})
	eventually(t, time.Minute, "the namespace's waypoint", func() (bool, string) {
		return waypoint() == want, workload().String()
	})

	nsObj, err := env.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	must(t, err)
	delete(nsObj.Labels, "istio.io/use-waypoint")
	_, err = env.kube.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{})
	must(t, err)
	eventually(t, time.Minute, "no waypoint once the namespace's label is gone", func() (bool, string) {
		return workload().GetWaypoint() == nil, workload().String()
	})

	setPodReady(t, ctx, ns, "app", false)
	eventually(t, time.Minute, "the pod UNHEALTHY once not Ready", func() (bool, string) {
		return workload().GetStatus() == workloadapi.WorkloadStatus_UNHEALTHY, workload().String()
	})
}
