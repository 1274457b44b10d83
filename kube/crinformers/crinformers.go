package crinformers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshreg/meshreg/kube"
)

// KubeInformers returns the cache's informers of the five kinds the kube
// controller reads, for kube.Options.Informers.
func KubeInformers(ctx context.Context, c cache.Cache) (*kube.SharedInformers, error) {
	get := func(obj client.Object) (kube.SharedInformer, error) {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("crinformers: the cache's %T informer: %w", obj, err)
		}
		return inf, nil
	}
	var (
		s   kube.SharedInformers
		err error
	)
	for _, kind := range []struct {
		into *kube.SharedInformer
		obj  client.Object
	}{
		{&s.Services, &corev1.Service{}},
		{&s.EndpointSlices, &discoveryv1.EndpointSlice{}},
		{&s.Pods, &corev1.Pod{}},
		{&s.Nodes, &corev1.Node{}},
		{&s.Namespaces, &corev1.Namespace{}},
	} {
		if *kind.into, err = get(kind.obj); err != nil {
			return nil, err
		}
	}
	return &s, nil
}
