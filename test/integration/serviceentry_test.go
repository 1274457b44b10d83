//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	istioinformers "istio.io/client-go/pkg/informers/externalversions"

	networkingapi "istio.io/api/networking/v1alpha3"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// ServiceEntries and WorkloadEntries through the CRDs: an entry's
// workloadSelector selects real Pods and a WorkloadEntry, and a
// Kubernetes Service selects the WorkloadEntry, through the aggregate.
func TestServiceEntriesOverTheCRDs(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-se"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-a", "region-1", "zone-a")
	mkService(t, ctx, ns, "legacy", map[string]string{"app": "legacy"})
	for i := range 2 {
		mkPod(t, ctx, ns, fmt.Sprintf("legacy-%d", i), "node-a", fmt.Sprintf("10.203.0.%d", i+1), map[string]string{"app": "legacy"}, true)
	}
	_, err := env.istio.NetworkingV1().ServiceEntries(ns).Create(ctx, &networkingv1.ServiceEntry{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-mesh", Namespace: ns},
		Spec: networkingapi.ServiceEntry{
			Hosts:            []string{"legacy.mesh.internal"},
			Addresses:        []string{"240.0.3.1"},
			Resolution:       networkingapi.ServiceEntry_STATIC,
			Ports:            []*networkingapi.ServicePort{{Name: "http", Number: 80, Protocol: "HTTP", TargetPort: 8080}},
			WorkloadSelector: &networkingapi.WorkloadSelector{Labels: map[string]string{"app": "legacy"}},
		},
	}, metav1.CreateOptions{})
	must(t, err)

	// The registries on their own informers, then on a control plane's
	// shared informer factories (client-go's and istio client-go's).
	modes := []struct {
		name       string
		registries func(*testing.T, context.Context) (*kube.Controller, serviceentry.Source)
	}{
		{"own informers", func(t *testing.T, _ context.Context) (*kube.Controller, serviceentry.Source) {
			kc, err := kube.New(env.kube, kube.Options{ClusterID: "it"})
			must(t, err)
			src, err := serviceentry.NewInformerSource(env.istio, serviceentry.InformerOptions{})
			must(t, err)
			return kc, src
		}},
		{"shared informers", func(t *testing.T, ctx context.Context) (*kube.Controller, serviceentry.Source) {
			kf := informers.NewSharedInformerFactory(env.kube, 0)
			inf := istioinformers.NewSharedInformerFactory(env.istio, 0)
			kc, err := kube.New(nil, kube.Options{ClusterID: "it", Informers: kube.FactoryInformers(kf)})
			must(t, err)
			src, err := serviceentry.NewSharedInformerSource(inf, serviceentry.SharedInformerOptions{})
			must(t, err)
			kf.Start(ctx.Done())
			inf.Start(ctx.Done())
			t.Cleanup(func() { kf.Shutdown(); inf.Shutdown() })
			return kc, src
		}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx, cancel := ctxFor(t)
			defer cancel()
			_, err := env.istio.NetworkingV1().WorkloadEntries(ns).Create(ctx, &networkingv1.WorkloadEntry{
				ObjectMeta: metav1.ObjectMeta{Name: "legacy-vm", Namespace: ns},
				Spec:       networkingapi.WorkloadEntry{Address: "10.203.1.1", Labels: map[string]string{"app": "legacy"}},
			}, metav1.CreateOptions{})
			must(t, err)
			own := func() (*kube.Controller, serviceentry.Source) { return mode.registries(t, ctx) }
			kc, src := own()
			sc, err := serviceentry.New(src, serviceentry.Options{ClusterID: "it"})
			must(t, err)
			agg, err := aggregate.New(aggregate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			must(t, agg.Add(kc))
			must(t, agg.Add(sc))
			runCtx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- agg.Run(runCtx) }()
			defer func() { stop(); must(t, <-done) }()
			eventually(t, time.Minute, "the aggregate to sync", func() (bool, string) { return agg.HasSynced(), "not synced" })

			addrs := func(key model.ServiceKey) map[string]bool {
				out := map[string]bool{}
				for _, ep := range agg.Endpoints(key, registry.EndpointQuery{}) {
					out[ep.Address()] = true
				}
				return out
			}
			want := map[string]bool{"10.203.0.1": true, "10.203.0.2": true, "10.203.1.1": true}
			entry := model.ServiceKey{Namespace: ns, Hostname: "legacy.mesh.internal"}
			svc := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("legacy", ns, "cluster.local")}
			for name, key := range map[string]model.ServiceKey{"the entry": entry, "the Service": svc} {
				eventually(t, time.Minute, name+" to hold both pods and the WorkloadEntry", func() (bool, string) {
					got := addrs(key)
					return len(got) == len(want) && got["10.203.0.1"] && got["10.203.0.2"] && got["10.203.1.1"], fmt.Sprint(got)
				})
			}

			// The WorkloadEntry goes: both services drop it.
			must(t, env.istio.NetworkingV1().WorkloadEntries(ns).Delete(ctx, "legacy-vm", metav1.DeleteOptions{}))
			for name, key := range map[string]model.ServiceKey{"the entry": entry, "the Service": svc} {
				eventually(t, time.Minute, name+" to drop the WorkloadEntry", func() (bool, string) {
					got := addrs(key)
					return len(got) == 2 && !got["10.203.1.1"], fmt.Sprint(got)
				})
			}
		})
	}
}
