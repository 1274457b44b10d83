//go:build integration

package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	networkingapi "istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/multicluster"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// remoteCluster is a second control plane (kube-apiserver and etcd, with
// Istio's CRDs), for a remote cluster: no controller manager, since its
// tests need no EndpointSlices.
type remoteCluster struct {
	kube       kubernetes.Interface
	istio      istioclient.Interface
	kubeconfig []byte // of a user in system:masters, for a cluster Secret
}

// startRemote starts a remote cluster's control plane until the test ends.
func startRemote(t *testing.T) *remoteCluster {
	t.Helper()
	crds, err := istioCRDs()
	must(t, err)
	e := &envtest.Environment{
		BinaryAssetsDirectory:    env.dir,
		CRDDirectoryPaths:        []string{crds},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	e.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.97.0.0/16")
	cfg, err := e.Start()
	if err != nil {
		t.Fatalf("starting the remote cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the remote cluster: %v", err)
		}
	})
	r := &remoteCluster{}
	if r.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if r.istio, err = istioclient.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	user, err := e.ControlPlane.AddUser(envtest.User{Name: "meshreg-remote-reader", Groups: []string{"system:masters"}}, nil)
	must(t, err)
	r.kubeconfig, err = user.KubeConfig()
	must(t, err)
	return r
}

// A remote cluster added from a Secret, through a second real
// kube-apiserver: multicluster's default WorkloadEntry registry (an Istio
// client from the Secret's kubeconfig) reads its WorkloadEntry, which the
// remote cluster's Service and the config cluster's ServiceEntry select,
// in the remote cluster; the config cluster's Service of the same name
// does not. The entry's change follows; deleting the Secret takes the
// cluster away.
func TestRemoteClusterWorkloadEntries(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	remote := startRemote(t)
	const ns, secrets = "it-remote", "it-remote-secrets"

	// The remote cluster: a Service and a VM it selects.
	_, err := remote.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	must(t, err)
	_, err = remote.kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ratings", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "ratings"}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
		}},
	}, metav1.CreateOptions{})
	must(t, err)
	vm := &networkingv1.WorkloadEntry{
		ObjectMeta: metav1.ObjectMeta{Name: "ratings-vm", Namespace: ns},
		Spec:       networkingapi.WorkloadEntry{Address: "10.208.0.1", Labels: map[string]string{"app": "ratings"}},
	}
	_, err = remote.istio.NetworkingV1().WorkloadEntries(ns).Create(ctx, vm, metav1.CreateOptions{})
	must(t, err)

	// The config cluster (the shared one): a Service of the same name,
	// and a ServiceEntry selecting the VM's labels.
	mkNamespace(t, ctx, ns, nil)
	mkNamespace(t, ctx, secrets, nil)
	mkService(t, ctx, ns, "ratings", map[string]string{"app": "ratings"})
	_, err = env.istio.NetworkingV1().ServiceEntries(ns).Create(ctx, &networkingv1.ServiceEntry{
		ObjectMeta: metav1.ObjectMeta{Name: "ratings-mesh", Namespace: ns},
		Spec: networkingapi.ServiceEntry{
			Hosts:            []string{"ratings.mesh.internal"},
			Addresses:        []string{"240.0.9.1"},
			Resolution:       networkingapi.ServiceEntry_STATIC,
			Ports:            []*networkingapi.ServicePort{{Name: "http", Number: 80, Protocol: "HTTP", TargetPort: 8080}},
			WorkloadSelector: &networkingapi.WorkloadSelector{Labels: map[string]string{"app": "ratings"}},
		},
	}, metav1.CreateOptions{})
	must(t, err)

	kc, err := kube.New(env.kube, kube.Options{ClusterID: "it"})
	must(t, err)
	src, err := serviceentry.NewInformerSource(env.istio, serviceentry.InformerOptions{})
	must(t, err)
	se, err := serviceentry.New(src, serviceentry.Options{ClusterID: "it"})
	must(t, err)
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, agg.Add(kc))
	must(t, agg.Add(se))
	mc, err := multicluster.New(env.kube, agg, multicluster.Options{
		Namespace:    secrets,
		LocalCluster: "it",
		Factory: multicluster.ClientFactory(func(id model.ClusterID, c kubernetes.Interface) (registry.Registry, error) {
			return kube.New(c, kube.Options{ClusterID: id})
		}),
	})
	must(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	aggDone, mcDone := make(chan error, 1), make(chan error, 1)
	go func() { aggDone <- agg.Run(runCtx) }()
	go func() { mcDone <- mc.Run(runCtx) }()
	defer func() { stop(); must(t, <-mcDone); must(t, <-aggDone) }()

	_, err = env.kube.CoreV1().Secrets(secrets).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "remote", Namespace: secrets, Labels: map[string]string{multicluster.SecretLabel: "true"}},
		Data:       map[string][]byte{"remote": remote.kubeconfig},
	}, metav1.CreateOptions{})
	must(t, err)

	svc := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("ratings", ns, "cluster.local")}
	entry := model.ServiceKey{Namespace: ns, Hostname: "ratings.mesh.internal"}
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
		eventually(t, time.Minute, what, func() (bool, string) {
			got := endpoints(key)
			return slices.Equal(got, want), fmt.Sprint(got)
		})
	}
	expect("the remote Service to select the remote VM", svc, "remote/10.208.0.1:8080")
	expect("the config cluster's ServiceEntry to select the remote VM", entry, "remote/10.208.0.1:8080")
	eventually(t, time.Minute, "the aggregate to sync", func() (bool, string) { return agg.HasSynced(), "not synced" })
	if got := agg.GetService(svc.Hostname); got == nil || len(got.Addresses["it"]) == 0 || len(got.Addresses["remote"]) == 0 {
		t.Errorf("ratings = %v, want VIPs in it and remote", got)
	}

	// The VM moves: both follow, through the remote cluster's watch.
	cur, err := remote.istio.NetworkingV1().WorkloadEntries(ns).Get(ctx, "ratings-vm", metav1.GetOptions{})
	must(t, err)
	cur.Spec.Address = "10.208.0.2"
	_, err = remote.istio.NetworkingV1().WorkloadEntries(ns).Update(ctx, cur, metav1.UpdateOptions{})
	must(t, err)
	expect("the remote Service to follow the VM", svc, "remote/10.208.0.2:8080")
	expect("the ServiceEntry to follow the VM", entry, "remote/10.208.0.2:8080")

	// The Secret goes: the remote cluster's registries, its VIP and its VM
	// go with it.
	must(t, env.kube.CoreV1().Secrets(secrets).Delete(ctx, "remote", metav1.DeleteOptions{}))
	expect("the remote VM gone from the Service", svc)
	expect("the remote VM gone from the ServiceEntry", entry)
	eventually(t, time.Minute, "the remote cluster's registries removed", func() (bool, string) {
		var left []string
		for _, r := range agg.Registries() {
			if r.Cluster() == "remote" {
				left = append(left, r.Provider().String())
			}
		}
		return len(left) == 0, fmt.Sprint(left)
	})
	if got := agg.GetService(svc.Hostname); got == nil || len(got.Addresses["remote"]) != 0 {
		t.Errorf("ratings = %v after the removal, want the config cluster's VIP alone", got)
	}
}
