//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/crinformers"
	"github.com/meshreg/meshreg/model"
)

// The kube controller on shared informers, against the real
// kube-apiserver and EndpointSlice controller: on a controller-runtime
// manager's cache (crinformers) and on a client-go SharedInformerFactory,
// it gives the dump of a controller on its own informers, follows a
// change, and stops with the manager.
func TestSharedInformersAgainstTheAPIServer(t *testing.T) {
	ctx, cancel := ctxFor(t)
	defer cancel()
	const ns = "it-shared"
	mkNamespace(t, ctx, ns, nil)
	mkNode(t, ctx, "node-shared", "region-1", "zone-a")
	mkService(t, ctx, ns, "web", map[string]string{"app": "web"})
	for i := range 3 {
		mkPod(t, ctx, ns, fmt.Sprintf("web-%d", i), "node-shared", fmt.Sprintf("10.201.0.%d", i+1), map[string]string{"app": "web"}, true)
	}
	key := model.ServiceKey{Namespace: ns, Hostname: model.KubeServiceHostname("web", ns, "cluster.local")}
	own := runKube(t, env.kube, kube.Options{ClusterID: "it"})
	eventually(t, time.Minute, "3 healthy endpoints", func() (bool, string) {
		h := health(own, key)
		return h[model.Healthy] == 3, fmt.Sprint(h)
	})

	t.Run("controller-runtime manager", func(t *testing.T) {
		mgr, err := ctrl.NewManager(env.cfg, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
		must(t, err)
		mctx, stop := context.WithCancel(ctx)
		shared, err := crinformers.KubeInformers(mctx, mgr.GetCache())
		must(t, err)
		c, err := kube.New(nil, kube.Options{ClusterID: "it", Informers: shared})
		must(t, err)
		must(t, mgr.Add(manager.RunnableFunc(c.Run)))
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()
		defer func() { stop(); must(t, <-done) }()
		sameAsOwn(t, c, own, key, ns, "web-0")
	})

	t.Run("SharedInformerFactory", func(t *testing.T) {
		sameAsOwn(t, runShared(t, env.kube, kube.Options{ClusterID: "it"}), own, key, ns, "web-1")
	})
}

// sameAsOwn waits for c to sync and to hold what own holds, then flips a
// pod's readiness and waits for both to see it, and flips it back.
func sameAsOwn(t *testing.T, c, own *kube.Controller, key model.ServiceKey, ns, pod string) {
	t.Helper()
	ctx, cancel := ctxFor(t)
	defer cancel()
	eventually(t, time.Minute, "the shared controller synced", func() (bool, string) { return c.HasSynced(), "not synced" })
	eventually(t, time.Minute, "the same dump as the controller's own informers", func() (bool, string) {
		got, want := dump(t, c), dump(t, own)
		return got == want, got
	})
	setPodReady(t, ctx, ns, pod, false)
	for _, r := range []*kube.Controller{c, own} {
		eventually(t, time.Minute, pod+" unhealthy", func() (bool, string) {
			h := health(r, key)
			return h[model.Unhealthy] == 1 && h[model.Healthy] == 2, fmt.Sprint(h)
		})
	}
	setPodReady(t, ctx, ns, pod, true)
	eventually(t, time.Minute, "the same dump again", func() (bool, string) {
		got, want := dump(t, c), dump(t, own)
		return got == want && health(c, key)[model.Healthy] == 3, got
	})
}
