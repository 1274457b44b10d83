package controllerruntime_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/crinformers"
)

// The kube controller on a controller-runtime cache's informers; here
// controller-runtime's fake cache.
func Example() {
	informers, err := crinformers.KubeInformers(context.Background(), &informertest.FakeInformers{})
	if err != nil {
		fmt.Println(err)
		return
	}
	kc, err := kube.New(nil, kube.Options{ClusterID: "cluster-1", Informers: informers})
	fmt.Println(kc.Cluster(), err)
	// Output: cluster-1 <nil>
}

// A control plane built on controller-runtime runs meshreg's kube
// controller on its manager's informers, as a runnable of the manager.
// (Not run here: it needs a cluster; the integration tier runs it
// against a real kube-apiserver.)
func Example_manager() {
	var cfg *rest.Config // the cluster's: ctrl.GetConfig(), or a test environment's
	mgr, err := ctrl.NewManager(cfg, manager.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := ctrl.SetupSignalHandler()
	informers, err := crinformers.KubeInformers(ctx, mgr.GetCache())
	if err != nil {
		fmt.Println(err)
		return
	}
	kc, err := kube.New(nil, kube.Options{ClusterID: "cluster-1", Informers: informers})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The manager starts its cache's informers and the registry, and
	// stops the registry, whose handlers then leave the informers.
	if err := mgr.Add(manager.RunnableFunc(kc.Run)); err != nil {
		fmt.Println(err)
		return
	}
	_ = mgr.Start(ctx)
}
