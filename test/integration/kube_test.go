//go:build integration

package integration

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// sharedInformers runs the kube controllers of startKube and runKube on
// a SharedInformerFactory's informers over their client
// (kube.Options.Informers), as a control plane that shares its informers
// would: `make test` runs the tier's kube tests once more so.
var sharedInformers = flag.Bool("shared", false, "run the kube controllers of startKube and runKube on shared informers")

// startKube runs a kube controller over client until it has synced, and
// returns it with the function that stops it. With -shared it is
// startShared.
func startKube(t *testing.T, client kubernetes.Interface, opts kube.Options) (*kube.Controller, func()) {
	t.Helper()
	return startMode(t, client, opts, *sharedInformers)
}

// runShared runs a kube controller until the test ends on the informers
// of a SharedInformerFactory over client, which runs as long as it does.
func runShared(t *testing.T, client kubernetes.Interface, opts kube.Options) *kube.Controller {
	t.Helper()
	c, stop := startMode(t, client, opts, true)
	t.Cleanup(stop)
	return c
}

// startMode is startKube, on a SharedInformerFactory's informers when
// shared (and the caller gave no Options.Informers).
func startMode(t *testing.T, client kubernetes.Interface, opts kube.Options, shared bool) (*kube.Controller, func()) {
	t.Helper()
	var factory informers.SharedInformerFactory
	var gatewayFactory gatewayinformers.SharedInformerFactory
	if shared && opts.Informers == nil {
		factory = informers.NewSharedInformerFactory(client, 0)
		opts.Informers = kube.FactoryInformers(factory)
		if gateways, classes := gatewayKindsServed(opts.GatewayClient); gateways {
			// The Gateway API's informers too: the controller is given no
			// client to watch with. (Before the CRDs are installed it
			// keeps the client, whose discovery a test may be about.)
			gatewayFactory = gatewayinformers.NewSharedInformerFactory(opts.GatewayClient, 0)
			opts.Informers.Gateways = gatewayFactory.Gateway().V1().Gateways().Informer()
			if classes {
				opts.Informers.GatewayClasses = gatewayFactory.Gateway().V1().GatewayClasses().Informer()
			}
			opts.GatewayClient = nil
		}
		t.Log("the kube controller runs on a SharedInformerFactory's informers")
	}
	c, err := kube.New(client, opts)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	if factory != nil {
		factory.Start(ctx.Done())
	}
	if gatewayFactory != nil {
		gatewayFactory.Start(ctx.Done())
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	stop := func() {
		cancel()
		must(t, <-done)
		if factory != nil {
			factory.Shutdown()
		}
		if gatewayFactory != nil {
			gatewayFactory.Shutdown()
		}
	}
	eventually(t, time.Minute, "the controller to sync", func() (bool, string) { return c.HasSynced(), "not synced" })
	return c, stop
}

// gatewayKindsServed reports whether there is a client and the cluster
// serves the Gateway API's Gateways and GatewayClasses.
func gatewayKindsServed(gc gatewayclient.Interface) (gateways, classes bool) {
	if gc == nil {
		return false, false
	}
	list, err := gc.Discovery().ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
	if err != nil {
		return false, false
	}
	for _, r := range list.APIResources {
		gateways = gateways || r.Name == "gateways"
		classes = classes || r.Name == "gatewayclasses"
	}
	return gateways, classes
}

// runKube runs a kube controller over client until the test ends.
func runKube(t *testing.T, client kubernetes.Interface, opts kube.Options) *kube.Controller {
	t.Helper()
	c, stop := startKube(t, client, opts)
	t.Cleanup(stop)
	return c
}

// health counts a service's endpoints by health.
func health(d registry.Discovery, key model.ServiceKey) map[model.HealthStatus]int {
	out := map[model.HealthStatus]int{}
	for _, ep := range d.Endpoints(key, registry.EndpointQuery{}) {
		out[ep.Health]++
	}
	return out
}

func dump(t *testing.T, d registry.Discovery) string {
	t.Helper()
	var b bytes.Buffer
	must(t, registry.WriteJSON(&b, d))
	return b.String()
}

// convergesToFresh waits until c's dump equals that of a controller
// started afresh over the same cluster.
func convergesToFresh(t *testing.T, c *kube.Controller, opts kube.Options) {
	t.Helper()
	eventually(t, time.Minute, "the registry to equal a fresh one", func() (bool, string) {
		got, want := dump(t, c), freshDump(t, opts)
		return got == want, fmt.Sprintf("dumps differ:\n%s\nfresh:\n%s", got, want)
	})
}

// freshDump runs a fresh controller until synced and returns its dump.
func freshDump(t *testing.T, opts kube.Options) string {
	t.Helper()
	c, stop := startKube(t, env.kube, opts)
	defer stop()
	return dump(t, c)
}

func TestEndpointsFromTheEndpointSliceController(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-slices"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-a", "region-1", "zone-a")
	mkNode(t, ctx, "node-b", "region-1", "zone-b")
	mkService(t, ctx, ns, "web", map[string]string{"app": "web"})
	// More than 100 endpoints: the controller splits them over slices.
	const n = 120
	for i := range n {
		node := []string{"node-a", "node-b"}[i%2]
		mkPod(t, ctx, ns, fmt.Sprintf("web-%d", i), node, fmt.Sprintf("10.200.%d.%d", i/200, i%200+1), map[string]string{"app": "web"}, true)
	}
	opts := kube.Options{ClusterID: "it"}
	c := runKube(t, env.kube, opts)
	key := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("web", ns, "cluster.local")}
	eventually(t, time.Minute, "120 healthy endpoints", func() (bool, string) {
		h := health(c, key)
		return h[model.Healthy] == n, fmt.Sprint(h)
	})
	slices, err := env.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
	must(t, err)
	if len(slices.Items) < 2 {
		t.Errorf("the EndpointSlice controller wrote %d slices for %d endpoints, want them split", len(slices.Items), n)
	}
	for _, ep := range c.Endpoints(key, registry.EndpointQuery{}) {
		if ep.Port != 8080 || ep.Locality.Region != "region-1" || (ep.Locality.Zone != "zone-a" && ep.Locality.Zone != "zone-b") || ep.WorkloadName == "" {
			t.Fatalf("endpoint %+v: want port 8080, a zone of region-1, and its pod", ep)
		}
	}

	// Readiness and deletion, through the real controller.
	for i := range 5 {
		setPodReady(t, ctx, ns, fmt.Sprintf("web-%d", i), false)
	}
	for i := 100; i < n; i++ {
		deletePod(t, ctx, ns, fmt.Sprintf("web-%d", i))
	}
	eventually(t, time.Minute, "95 healthy and 5 unhealthy endpoints", func() (bool, string) {
		h := health(c, key)
		return h[model.Healthy] == 95 && h[model.Unhealthy] == 5 && len(h) == 2, fmt.Sprint(h)
	})

	// A terminating pod, held by a finalizer, still serving: Terminating,
	// and Draining once the Service carries Istio's persistent-session
	// label.
	mkPod(t, ctx, ns, "web-final", "node-a", "10.200.9.9", map[string]string{"app": "web"}, true, "meshreg.io/test")
	eventually(t, time.Minute, "web-final healthy", func() (bool, string) { h := health(c, key); return h[model.Healthy] == 96, fmt.Sprint(h) })
	deletePod(t, ctx, ns, "web-final")
	eventually(t, time.Minute, "web-final terminating", func() (bool, string) { h := health(c, key); return h[model.Terminating] == 1, fmt.Sprint(h) })
	_, err = env.kube.CoreV1().Services(ns).Patch(ctx, "web", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+kube.LabelPersistentSession+`":"cookie"}}}`), metav1.PatchOptions{})
	must(t, err)
	eventually(t, time.Minute, "web-final draining", func() (bool, string) { h := health(c, key); return h[model.Draining] == 1, fmt.Sprint(h) })
	_, err = env.kube.CoreV1().Pods(ns).Patch(ctx, "web-final", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
	must(t, err)
	eventually(t, time.Minute, "web-final gone", func() (bool, string) {
		h := health(c, key)
		return h[model.Draining] == 0 && h[model.Healthy] == 95, fmt.Sprint(h)
	})

	convergesToFresh(t, c, opts)
}

// An outage: the registry's connection to the apiserver is cut (every
// watch breaks), pods are deleted and added meanwhile, and once the
// connection is back the registry relists and converges; no endpoint of a
// deleted pod survives.
func TestOutageThenRelist(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-outage"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-a", "region-1", "zone-a")
	mkService(t, ctx, ns, "api", map[string]string{"app": "api"})
	for i := range 10 {
		mkPod(t, ctx, ns, fmt.Sprintf("api-%d", i), "node-a", fmt.Sprintf("10.201.0.%d", i+1), map[string]string{"app": "api"}, true)
	}

	u, err := url.Parse(env.cfg.Host)
	must(t, err)
	proxy, err := newFaultProxy(u.Host)
	must(t, err)
	defer proxy.close()
	cfg := rest.CopyConfig(env.cfg)
	cfg.Host = "https://" + proxy.addr()
	client, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	opts := kube.Options{ClusterID: "it"}
	c := runKube(t, client, opts)
	key := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("api", ns, "cluster.local")}
	eventually(t, time.Minute, "10 endpoints", func() (bool, string) { h := health(c, key); return h[model.Healthy] == 10, fmt.Sprint(h) })

	proxy.cut()
	for i := range 4 {
		deletePod(t, ctx, ns, fmt.Sprintf("api-%d", i))
	}
	mkPod(t, ctx, ns, "api-new", "node-a", "10.201.0.99", map[string]string{"app": "api"}, true)
	// Let the slices settle while the registry is cut off.
	eventually(t, time.Minute, "the slices to hold 7 endpoints", func() (bool, string) {
		sl, err := env.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=api"})
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, s := range sl.Items {
			n += len(s.Endpoints)
		}
		return n == 7, fmt.Sprint(n, " endpoints in slices")
	})
	// Cut off, the registry cannot have seen the changes: this is what
	// makes the relist below a recovery.
	if h := health(c, key); h[model.Healthy] != 10 || len(h) != 1 {
		t.Fatalf("while cut off the registry holds %v, want the 10 endpoints it had: the outage did not cut it off", h)
	}
	proxy.restore()
	eventually(t, 2*time.Minute, "the relisted registry to hold the 7 live endpoints", func() (bool, string) {
		var addrs []string
		for _, ep := range c.Endpoints(key, registry.EndpointQuery{}) {
			addrs = append(addrs, ep.Address())
		}
		return len(addrs) == 7, fmt.Sprint(addrs)
	})
	for _, ep := range c.Endpoints(key, registry.EndpointQuery{}) {
		for i := range 4 {
			if ep.WorkloadName == fmt.Sprintf("api-%d", i) {
				t.Errorf("endpoint of deleted pod api-%d survived the relist", i)
			}
		}
	}
	convergesToFresh(t, c, opts)
}

func TestNamespaceFilter(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-filter"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-a", "region-1", "zone-a")
	mkService(t, ctx, ns, "svc", map[string]string{"app": "svc"})
	mkPod(t, ctx, ns, "svc-0", "node-a", "10.202.0.1", map[string]string{"app": "svc"}, true)
	c := runKube(t, env.kube, kube.Options{ClusterID: "it",
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}})
	key := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("svc", ns, "cluster.local")}
	if c.ServiceByKey(key) != nil {
		t.Fatal("a service of an unselected namespace is in the registry")
	}
	label := func(v string) {
		patch := `{"metadata":{"labels":{"mesh":` + v + `}}}`
		_, err := env.kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		must(t, err)
	}
	label(`"on"`)
	eventually(t, time.Minute, "the relabelled namespace's service and endpoint", func() (bool, string) {
		return c.ServiceByKey(key) != nil && len(c.Endpoints(key, registry.EndpointQuery{})) == 1, "not yet"
	})
	label(`null`)
	eventually(t, time.Minute, "the namespace's objects to leave", func() (bool, string) {
		return c.ServiceByKey(key) == nil && !hasWorkloadIn(c, ns), "still there"
	})
}

func hasWorkloadIn(d registry.Discovery, ns string) bool {
	for _, w := range d.Workloads() {
		if w.Namespace == ns {
			return true
		}
	}
	return false
}
