package multicluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// fakeClusters stands for the remote clusters a test's Secrets name: each
// kubeconfig (a name, in these tests) is a cluster of manifests, with a
// fake Kubernetes clientset and a fake Istio one. Both factories build
// registries as the defaults do, over the fakes: kube.New, and a
// WorkloadEntriesOnly serviceentry controller over an informer source that
// watches WorkloadEntries alone.
type fakeClusters struct {
	mu        sync.Mutex
	manifests map[string]string
}

func (f *fakeClusters) objects(t *testing.T, kubeconfig []byte) []runtime.Object {
	f.mu.Lock()
	yaml, ok := f.manifests[string(kubeconfig)]
	f.mu.Unlock()
	if !ok {
		t.Errorf("no cluster for kubeconfig %q", kubeconfig)
	}
	objs, err := manifest.Load(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func (f *fakeClusters) kube(t *testing.T) Factory {
	return func(id model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
		return kube.New(manifest.KubeClientset(f.objects(t, kubeconfig)), kube.Options{ClusterID: id})
	}
}

func (f *fakeClusters) workloadEntries(t *testing.T) Factory {
	return func(id model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
		client := manifest.IstioClientset(f.objects(t, kubeconfig))
		client.Resources = []*metav1.APIResourceList{{
			GroupVersion: "networking.istio.io/v1",
			APIResources: []metav1.APIResource{{Name: "workloadentries", Namespaced: true, Kind: "WorkloadEntry"}},
		}}
		src, err := serviceentry.NewInformerSource(client, serviceentry.InformerOptions{WorkloadEntriesOnly: true, CRDPollInterval: DefaultCRDPollInterval})
		if err != nil {
			return nil, err
		}
		return serviceentry.New(src, serviceentry.Options{ClusterID: id, WorkloadEntriesOnly: true})
	}
}

const remoteWest = `
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop}
spec:
  clusterIP: 10.97.0.7
  selector: {app: ratings}
  ports: [{name: http, port: 9080, targetPort: 9080}]
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: ratings-vm, namespace: shop}
spec: {address: %s, labels: {app: ratings}}
`

// A remote cluster added from a Secret brings its WorkloadEntries: its
// Services and the config cluster's ServiceEntries select them, in the
// remote cluster. A new kubeconfig replaces both of its registries, and
// the Secret's deletion takes every trace of the cluster away.
func TestRemoteWorkloadEntriesThroughTheAggregate(t *testing.T) {
	clusters := &fakeClusters{manifests: map[string]string{
		"west-1": fmt.Sprintf(remoteWest, "10.5.0.7"),
		"west-2": fmt.Sprintf(remoteWest, "10.5.0.8"),
	}}
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The config cluster east: a ServiceEntry selecting app=ratings in
	// shop, and a Service ratings, which selects east's workloads only.
	east, err := kube.New(manifest.KubeClientset(load(t, `
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop}
spec:
  clusterIP: 10.96.0.7
  selector: {app: ratings}
  ports: [{name: http, port: 9080, targetPort: 9080}]
`)), kube.Options{ClusterID: "east"})
	must(t, err)
	src, err := serviceentry.NewStaticSource(load(t, `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ratings-mesh, namespace: shop}
spec:
  hosts: [ratings.mesh.internal]
  addresses: [240.0.0.7]
  resolution: STATIC
  ports: [{number: 80, name: http, targetPort: 9080}]
  workloadSelector: {labels: {app: ratings}}
`)...)
	must(t, err)
	se, err := serviceentry.New(src, serviceentry.Options{ClusterID: "east"})
	must(t, err)
	must(t, agg.Add(east))
	must(t, agg.Add(se))
	runAggregate(t, agg)

	config := fake.NewSimpleClientset(secret("remote-west", true, map[string]string{"west": "west-1"}))
	watching := watched(config)
	c, ctx := startController(t, config, agg, Options{
		Factory: clusters.kube(t), WorkloadEntries: clusters.workloadEntries(t), LocalCluster: "east",
	})
	eventually(t, "the controller synced", c.HasSynced)

	svc := model.ServiceKey{Namespace: "shop", Hostname: "ratings.shop.svc.cluster.local"}
	entry := model.ServiceKey{Namespace: "shop", Hostname: "ratings.mesh.internal"}
	endpoints := func(key model.ServiceKey) []string {
		var out []string
		for _, ep := range agg.Endpoints(key, registry.EndpointQuery{}) {
			out = append(out, fmt.Sprintf("%s/%s:%d", ep.Cluster, ep.Address(), ep.Port))
		}
		slices.Sort(out)
		return out
	}
	expect := func(what string, key model.ServiceKey, want ...string) {
		t.Helper()
		eventually(t, what, func() bool { return slices.Equal(endpoints(key), want) })
	}
	expect("west's Service to select west's VM, in west", svc, "west/10.5.0.7:9080")
	expect("east's ServiceEntry to select west's VM, in west", entry, "west/10.5.0.7:9080")
	if got := agg.Endpoints(svc, registry.EndpointQuery{Cluster: "east"}); len(got) != 0 {
		t.Errorf("east's shard of ratings holds %v: a VM of west reached east's Service", got)
	}

	// New credentials: both of west's registries are replaced.
	<-watching
	_, err = config.CoreV1().Secrets("istio-system").Update(ctx, secret("remote-west", true, map[string]string{"west": "west-2"}), metav1.UpdateOptions{})
	must(t, err)
	expect("the replacement's VM in west's Service", svc, "west/10.5.0.8:9080")
	expect("the replacement's VM in east's ServiceEntry", entry, "west/10.5.0.8:9080")

	// The Secret goes: so does every trace of west.
	must(t, config.CoreV1().Secrets("istio-system").Delete(ctx, "remote-west", metav1.DeleteOptions{}))
	expect("west's endpoints gone from the Service", svc)
	expect("west's VM gone from the ServiceEntry", entry)
	eventually(t, "west's registries removed", func() bool {
		for _, r := range agg.Registries() {
			if r.Cluster() == "west" {
				return false
			}
		}
		return true
	})
	for _, w := range agg.Workloads() {
		if w.Endpoint.Cluster == "west" {
			t.Errorf("workload %s left behind", w.Key())
		}
	}
}

// The default factories' registries: a kubeconfig they cannot read is an
// error; a readable one gives a WorkloadEntriesOnly registry of provider
// External under the cluster's ID, whatever the options say.
func TestWorkloadEntryFactory(t *testing.T) {
	f := WorkloadEntryFactory(WorkloadEntryOptions{Registry: serviceentry.Options{ClusterID: "ignored", NamespaceSelector: &metav1.LabelSelector{}}})
	if _, err := f("c1", []byte("{not yaml")); err == nil || !strings.Contains(err.Error(), "reading kubeconfig") {
		t.Errorf("err = %v, want a kubeconfig read error", err)
	}
	reg, err := f("west", []byte(kubeconfigFor("https://west.example.invalid:6443")))
	if err != nil {
		t.Fatal(err)
	}
	if reg.Provider() != model.External || reg.Cluster() != "west" {
		t.Errorf("registry of %s/%s, want External/west", reg.Provider(), reg.Cluster())
	}
	if _, ok := reg.(*serviceentry.Controller); !ok {
		t.Errorf("registry is a %T", reg)
	}
	if got := (Options{Factory: stubFactory}).defaults(); got.WorkloadEntries == nil || got.Namespace != DefaultNamespace || got.Logger == nil {
		t.Errorf("defaults() = %+v", got)
	}
	if got := (WorkloadEntryOptions{}).defaults(); got.CRDPollInterval != DefaultCRDPollInterval {
		t.Errorf("CRDPollInterval default = %v", got.CRDPollInterval)
	}
}

func kubeconfigFor(server string) string {
	return `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
}

func load(t *testing.T, yaml string) []runtime.Object {
	t.Helper()
	objs, err := manifest.Load(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runAggregate runs agg until the test ends.
func runAggregate(t *testing.T, agg *aggregate.Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agg.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	eventually(t, "the aggregate synced", agg.HasSynced)
}

// watched returns a channel closed once an informer watches client's
// Secrets: the fake loses changes made between its list and the watch.
func watched(client *fake.Clientset) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("secrets", func(k8stesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(ch) })
		return false, nil, nil
	})
	return ch
}
