package address

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/meshreg/meshreg/model"
)

// KubeMetadata is Metadata read from a cluster (the config cluster):
// its Namespaces, and, when given a Gateway API client, its Gateways and
// GatewayClasses. Run starts its informers.
type KubeMetadata struct {
	static  *StaticMetadata
	kube    kubernetes.Interface
	gateway gatewayclient.Interface
	synced  atomic.Bool
	running atomic.Bool
}

// KubeMetadataOptions configure KubeMetadata.
type KubeMetadataOptions struct {
	// Cluster is the cluster's ID, for diagnostics.
	Cluster model.ClusterID
	// Network is the network the cluster's waypoint IPs are on.
	Network model.NetworkID
	// Resync is the informers' resync period; 0 for none.
	Resync time.Duration
}

// NewKubeMetadata returns metadata over a cluster. gw may be nil, or the
// cluster may not serve the Gateway API (checked when Run starts): then
// there are no waypoints and no network gateways. The Gateway API's
// resources installed later are not picked up; restart it.
func NewKubeMetadata(client kubernetes.Interface, gw gatewayclient.Interface, opts KubeMetadataOptions) *KubeMetadata {
	return &KubeMetadata{static: NewStaticMetadataOn(opts.Cluster, opts.Network), kube: client, gateway: gw}
}

// Namespace implements Metadata.
func (m *KubeMetadata) Namespace(name string) *Namespace { return m.static.Namespace(name) }

// Waypoint implements Metadata.
func (m *KubeMetadata) Waypoint(namespace, name string) *Waypoint {
	return m.static.Waypoint(namespace, name)
}

// NetworkGateways implements Metadata.
func (m *KubeMetadata) NetworkGateways() []model.NetworkGateway { return m.static.NetworkGateways() }

// Diagnostics implements Metadata.
func (m *KubeMetadata) Diagnostics() []model.Diagnostic { return m.static.Diagnostics() }

// Subscribe implements Metadata.
func (m *KubeMetadata) Subscribe(f func()) (unsubscribe func()) { return m.static.Subscribe(f) }

// HasSynced implements Metadata: the informers have listed.
func (m *KubeMetadata) HasSynced() bool { return m.synced.Load() }

// Run runs the informers until ctx is done. It returns an error when
// they cannot sync; a second call returns an error.
func (m *KubeMetadata) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return fmt.Errorf("address: metadata already running or has run")
	}
	kf := informers.NewSharedInformerFactory(m.kube, 0)
	nsInf := kf.Core().V1().Namespaces()
	listers := []func() []any{func() []any {
		ns, _ := nsInf.Lister().List(everything())
		return toAny(ns)
	}}
	informersOf := []cache.SharedIndexInformer{nsInf.Informer()}
	var gf gatewayinformers.SharedInformerFactory
	served, err := gatewayAPIServed(m.gateway)
	if err != nil {
		return fmt.Errorf("address: metadata: %w", err)
	}
	if served {
		gf = gatewayinformers.NewSharedInformerFactory(m.gateway, 0)
		gws, classes := gf.Gateway().V1().Gateways(), gf.Gateway().V1().GatewayClasses()
		informersOf = append(informersOf, gws.Informer(), classes.Informer())
		listers = append(listers, func() []any {
			g, _ := gws.Lister().List(everything())
			return toAny(g)
		}, func() []any {
			c, _ := classes.Lister().List(everything())
			return toAny(c)
		})
	}
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }, DeleteFunc: func(any) { poke() }}
	for _, inf := range informersOf {
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("address: metadata informer: %w", err)
		}
	}
	kf.Start(ctx.Done())
	defer kf.Shutdown()
	if gf != nil {
		gf.Start(ctx.Done())
		defer gf.Shutdown()
	}
	syncs := make([]cache.InformerSynced, 0, len(informersOf))
	for _, inf := range informersOf {
		syncs = append(syncs, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("address: metadata informers did not sync")
	}
	load := func() {
		var objs []any
		for _, l := range listers {
			objs = append(objs, l()...)
		}
		m.static.Replace(objs...)
	}
	load()
	m.synced.Store(true)
	load() // tells the subscribers that the metadata synced
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			load()
		}
	}
}

func everything() labels.Selector { return labels.Everything() }

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// gatewayAPIServed reports whether the cluster serves v1 Gateways and
// GatewayClasses: without them there is nothing to watch, and informers
// of absent resources would never sync. A nil client serves none.
func gatewayAPIServed(client gatewayclient.Interface) (bool, error) {
	if client == nil {
		return false, nil
	}
	list, err := client.Discovery().ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1")
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var gateways, classes bool
	for _, r := range list.APIResources {
		gateways = gateways || r.Name == "gateways"
		classes = classes || r.Name == "gatewayclasses"
	}
	return gateways && classes, nil
}
