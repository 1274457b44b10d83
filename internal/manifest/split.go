package manifest

import (
	"context"
	"strings"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	istioinformers "istio.io/client-go/pkg/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsfake "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned/fake"
)

// IsIstio reports whether obj is an Istio object: its API group is
// istio.io or a subgroup (networking.istio.io, security.istio.io, ...).
func IsIstio(obj runtime.Object) bool {
	g := obj.GetObjectKind().GroupVersionKind().Group
	return g == "istio.io" || strings.HasSuffix(g, ".istio.io")
}

// IsGatewayAPI reports whether obj is a Kubernetes Gateway API object
// (gateway.networking.k8s.io).
func IsGatewayAPI(obj runtime.Object) bool {
	return obj.GetObjectKind().GroupVersionKind().Group == "gateway.networking.k8s.io"
}

// IsMCS reports whether obj is a Kubernetes Multi-Cluster Services
// object (multicluster.x-k8s.io: ServiceExport, ServiceImport).
func IsMCS(obj runtime.Object) bool {
	return obj.GetObjectKind().GroupVersionKind().Group == mcsv1alpha1.GroupName
}

// Split separates Kubernetes objects from Istio objects, keeping their
// order.
func Split(objs []runtime.Object) (kube, istio []runtime.Object) {
	for _, o := range objs {
		if IsIstio(o) {
			istio = append(istio, o)
		} else {
			kube = append(kube, o)
		}
	}
	return kube, istio
}

// KubeClientset returns a fake Kubernetes clientset holding the Kubernetes
// objects of objs; Istio objects are ignored.
//
// It is client-go's NewSimpleClientset, with its limits: no field
// management, no server-side validation or defaulting, label selectors
// ignored on watch, and events between a list and the following watch
// dropped.
func KubeClientset(objs []runtime.Object) *kubefake.Clientset {
	kube, _ := Split(objs)
	return kubefake.NewSimpleClientset(kube...) //nolint:staticcheck // NewClientset needs apply configurations for every type
}

// IstioClientset returns a fake Istio clientset holding the Istio objects
// of objs; Kubernetes objects are ignored. The limits of KubeClientset
// apply.
func IstioClientset(objs []runtime.Object) *IstioFake {
	_, istio := Split(objs)
	return &IstioFake{istiofake.NewSimpleClientset(istio...)}
}

// IstioFake is istio client-go's fake clientset, telling informers that it
// does not support the watch-list protocol, as client-go's own fake does:
// without that, a reflector waits for the initial-events bookmark the fake
// never sends.
type IstioFake struct {
	*istiofake.Clientset
}

// IsWatchListSemanticsUnSupported returns true.
func (*IstioFake) IsWatchListSemanticsUnSupported() bool { return true }

// MCSFake is the MCS API's fake clientset, serving ServiceExports and
// ServiceImports of multicluster.x-k8s.io/v1alpha1 in its discovery, as
// a cluster with the MCS CRDs installed does, and telling informers that
// it does not support the watch-list protocol (see IstioFake). The
// limits of KubeClientset apply.
type MCSFake struct {
	*mcsfake.Clientset
}

// NewMCSFake returns an MCSFake holding objs.
func NewMCSFake(objs ...runtime.Object) *MCSFake {
	c := mcsfake.NewSimpleClientset(objs...)
	c.Resources = []*metav1.APIResourceList{{
		GroupVersion: mcsv1alpha1.GroupVersion.String(),
		APIResources: []metav1.APIResource{
			{Name: "serviceexports", Namespaced: true, Kind: "ServiceExport"},
			{Name: "serviceimports", Namespaced: true, Kind: "ServiceImport"},
		},
	}}
	return &MCSFake{c}
}

// IsWatchListSemanticsUnSupported returns true.
func (*MCSFake) IsWatchListSemanticsUnSupported() bool { return true }

// IstioInformerFactory returns an istio client-go SharedInformerFactory
// over a fake clientset whose ServiceEntry and WorkloadEntry informers
// ask the client whether it serves the watch-list protocol, as client-go's
// own informers do. istio client-go's generated informers never ask, and
// so would wait on the fake for an initial-events bookmark it never
// sends; against a real API server the generated ones work as they are.
func IstioInformerFactory(client *IstioFake) istioinformers.SharedInformerFactory {
	f := istioinformers.NewSharedInformerFactory(client, 0)
	f.InformerFor(&networkingv1.ServiceEntry{}, func(c istioclient.Interface, resync time.Duration) cache.SharedIndexInformer {
		ses := c.NetworkingV1().ServiceEntries("")
		return listWatchInformer(client, &networkingv1.ServiceEntry{}, resync,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ses.List(ctx, o) }, ses.Watch)
	})
	f.InformerFor(&networkingv1.WorkloadEntry{}, func(c istioclient.Interface, resync time.Duration) cache.SharedIndexInformer {
		wes := c.NetworkingV1().WorkloadEntries("")
		return listWatchInformer(client, &networkingv1.WorkloadEntry{}, resync,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return wes.List(ctx, o) }, wes.Watch)
	})
	return f
}

// listWatchInformer is an informer of obj's kind over list and watch, on
// the watch-list protocol only if client says it serves it.
func listWatchInformer(client any, obj runtime.Object, resync time.Duration,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchFn}, client)
	return cache.NewSharedIndexInformer(lw, obj, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}
