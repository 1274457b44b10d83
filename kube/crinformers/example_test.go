package crinformers_test

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/crinformers"
)

// The kube controller takes a controller-runtime cache's informers; here
// controller-runtime's fake cache, which hands out fake informers.
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
