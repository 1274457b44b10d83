//go:build integration

package integration

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// discoverabilities renders a service's endpoints' discoverability, for
// comparison and failure messages: "AlwaysDiscoverable ...", "" for none.
func discoverabilities(d registry.Discovery, key model.ServiceKey) string {
	var out []string
	for _, ep := range d.Endpoints(key, registry.EndpointQuery{}) {
		out = append(out, ep.Discoverability.String())
	}
	return strings.Join(out, " ")
}

// TestMCSExportsAndImports: a kube controller with MCS discovery and
// ClusterSet hosts starts before the MCS CRDs exist, and runs: nothing is
// exported, so the Service's endpoint is for its own cluster only. Once
// the CRDs are installed (from the mcs-api module's manifests), it reads
// ServiceExports and ServiceImports without a restart, and follows them
// as they are created, changed and deleted through the API.
func TestMCSExportsAndImports(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	mc, err := mcsclient.NewForConfig(env.cfg)
	must(t, err)
	const ns = "it-mcs"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-mcs", "region-1", "zone-a")
	mkService(t, ctx, ns, "web", map[string]string{"app": "web"})
	mkPod(t, ctx, ns, "web-0", "node-mcs", "10.201.0.1", map[string]string{"app": "web"}, true)

	opts := kube.Options{ClusterID: "it", MCS: kube.MCSOptions{Client: mc, ServiceDiscovery: true, Host: true, CheckInterval: 100 * time.Millisecond}}
	c := runKube(t, env.kube, opts)
	web := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("web", ns, "cluster.local")}
	set := model.ServiceKey{Namespace: ns, Hostname: model.ClusterSetHostname("web", ns)}
	same, always := model.DiscoverableFromSameCluster.String(), model.AlwaysDiscoverable.String()
	eventually(t, time.Minute, "without the MCS API, web's endpoint for its cluster only", func() (bool, string) {
		got := discoverabilities(c, web)
		return got == same, got
	})

	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/mcs-api").Output()
	must(t, err)
	_, err = envtest.InstallCRDs(env.cfg, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(strings.TrimSpace(string(out)), "config", "crd")},
		ErrorIfPathMissing: true,
	})
	must(t, err)

	exports, imports := mc.MulticlusterV1alpha1().ServiceExports(ns), mc.MulticlusterV1alpha1().ServiceImports(ns)
	_, err = exports.Create(ctx, &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, metav1.CreateOptions{})
	must(t, err)
	eventually(t, time.Minute, "the exported web's endpoint for every cluster", func() (bool, string) {
		got := discoverabilities(c, web)
		svc := c.ServiceByKey(web)
		return got == always && svc != nil && len(svc.Exports) == 1, got
	})

	si, err := imports.Create(ctx, &mcsv1alpha1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, IPs: []string{"242.0.0.1"},
			Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	must(t, err)
	vips := func() string {
		svc := c.ServiceByKey(set)
		if svc == nil {
			return "no ClusterSet host"
		}
		return fmt.Sprint(svc.Addresses["it"])
	}
	eventually(t, time.Minute, "the ClusterSet host with the import's VIP and web's endpoint", func() (bool, string) {
		got := vips() + " " + discoverabilities(c, set)
		return got == "[242.0.0.1/32] "+always, got
	})

	si.Spec.IPs = []string{"242.0.0.2"}
	_, err = imports.Update(ctx, si, metav1.UpdateOptions{})
	must(t, err)
	eventually(t, time.Minute, "the ClusterSet host's new VIP", func() (bool, string) {
		got := vips()
		return got == "[242.0.0.2/32]", got
	})

	must(t, exports.Delete(ctx, "web", metav1.DeleteOptions{}))
	eventually(t, time.Minute, "web's endpoints for their cluster only once unexported, under both hosts", func() (bool, string) {
		got := discoverabilities(c, web) + " / " + discoverabilities(c, set)
		return got == same+" / "+same, got
	})

	must(t, imports.Delete(ctx, "web", metav1.DeleteOptions{}))
	eventually(t, time.Minute, "no ClusterSet host once the import is gone", func() (bool, string) {
		got := vips()
		return got == "no ClusterSet host", got
	})

	convergesToFresh(t, c, opts)
}
