package sources

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// ManifestCluster is a cluster read from manifests: its Kubernetes objects
// sit in a fake API that its kube controller watches, and its Istio
// objects feed its serviceentry controller (the config cluster's
// ServiceEntries and WorkloadEntries; another cluster's WorkloadEntries
// alone). Apply and Reload bring both to new manifests, as a live cluster
// would change.
type ManifestCluster struct {
	id     model.ClusterID
	fsys   fs.FS
	path   string
	cfg    Config
	config bool

	client *kubefake.Clientset
	// gateways holds the Gateway API objects; mcs the MCS API's.
	gateways *gatewayfake.Clientset
	mcs      *manifest.MCSFake
	kube     *kube.Controller
	// factory, with Config.SharedInformers, holds the informers the kube
	// controller shares; nil otherwise.
	factory informers.SharedInformerFactory
	// se is the cluster's serviceentry registry and its source: the full
	// one of the config cluster, a WorkloadEntry registry elsewhere.
	se *configSource

	// mu guards the fields below and serialises Apply.
	mu      sync.Mutex
	applied map[objectKey]runtime.Object
	diags   []model.Diagnostic
}

type objectKey struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

func keyOf(obj runtime.Object) (objectKey, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return objectKey{}, err
	}
	return objectKey{gvk: obj.GetObjectKind().GroupVersionKind(), namespace: m.GetNamespace(), name: m.GetName()}, nil
}

func newManifestCluster(cfg Config, c Cluster, config bool) (*ManifestCluster, error) {
	objs, err := load(cfg.Loader, c.FS, c.Manifests)
	diags, err := loadDiagnostics(c.ID, err)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	mc := &ManifestCluster{
		id: c.ID, fsys: c.FS, path: c.Manifests, cfg: cfg, config: config,
		client:   kubefake.NewSimpleClientset(),
		gateways: servingGatewayAPI(gatewayfake.NewSimpleClientset()),
		mcs:      manifest.NewMCSFake(),
		applied:  map[objectKey]runtime.Object{},
	}
	opts := kubeOptions(cfg, c.ID, config, mc.gateways, mc.mcs)
	if cfg.SharedInformers {
		mc.factory = informers.NewSharedInformerFactory(mc.client, 0)
		opts.Informers = kube.FactoryInformers(mc.factory)
	}
	mc.kube, err = kube.New(mc.client, opts)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	if mc.se, err = newConfigSource(cfg, c.ID, config); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	mc.diags = diags
	if err := mc.Apply(objs); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.ID, err)
	}
	return mc, nil
}

// ID returns the cluster's ID.
func (m *ManifestCluster) ID() model.ClusterID { return m.id }

// Path returns the manifest file or directory.
func (m *ManifestCluster) Path() string { return m.path }

// Diagnostics returns the problems found in the manifests last applied.
func (m *ManifestCluster) Diagnostics() []model.Diagnostic {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.diags)
}

func (m *ManifestCluster) registries() []registry.Registry {
	if m.factory != nil {
		return []registry.Registry{factoryRun{m.kube, m.factory}, m.se.registry()}
	}
	return []registry.Registry{m.kube, m.se.registry()}
}

// factoryRun runs a kube controller with the informer factory it shares,
// as the control plane that owns the factory would: the factory starts
// before the controller and shuts down after it.
type factoryRun struct {
	*kube.Controller
	factory informers.SharedInformerFactory
}

func (r factoryRun) Run(ctx context.Context) error {
	r.factory.Start(ctx.Done())
	defer r.factory.Shutdown()
	return r.Controller.Run(ctx)
}

// SharedCacheChanges returns, with Config.SharedInformers, the objects of
// the shared informers' caches that differ from the fake API's: a
// registry that modified an object it read from a shared cache shows up
// here. Nil without Config.SharedInformers.
func (m *ManifestCluster) SharedCacheChanges() []string {
	if m.factory == nil {
		return nil
	}
	var out []string
	check := func(kind string, cached []any, get func(namespace, name string) (runtime.Object, error)) {
		for _, o := range cached {
			obj := o.(runtime.Object)
			m, err := meta.Accessor(obj)
			if err != nil {
				continue
			}
			api, err := get(m.GetNamespace(), m.GetName())
			if err != nil {
				continue // deleted since: the cache catches up
			}
			if am, err := meta.Accessor(api); err == nil && am.GetResourceVersion() != m.GetResourceVersion() {
				continue // changed since: the cache catches up
			}
			if !equality.Semantic.DeepEqual(obj, api) {
				out = append(out, kind+"/"+m.GetNamespace()+"/"+m.GetName())
			}
		}
	}
	ctx := context.Background()
	core, disc := m.client.CoreV1(), m.client.DiscoveryV1()
	check("Service", m.factory.Core().V1().Services().Informer().GetStore().List(), func(ns, n string) (runtime.Object, error) {
		return core.Services(ns).Get(ctx, n, metav1.GetOptions{})
	})
	check("EndpointSlice", m.factory.Discovery().V1().EndpointSlices().Informer().GetStore().List(), func(ns, n string) (runtime.Object, error) {
		return disc.EndpointSlices(ns).Get(ctx, n, metav1.GetOptions{})
	})
	check("Pod", m.factory.Core().V1().Pods().Informer().GetStore().List(), func(ns, n string) (runtime.Object, error) {
		return core.Pods(ns).Get(ctx, n, metav1.GetOptions{})
	})
	check("Node", m.factory.Core().V1().Nodes().Informer().GetStore().List(), func(_, n string) (runtime.Object, error) {
		return core.Nodes().Get(ctx, n, metav1.GetOptions{})
	})
	check("Namespace", m.factory.Core().V1().Namespaces().Informer().GetStore().List(), func(_, n string) (runtime.Object, error) {
		return core.Namespaces().Get(ctx, n, metav1.GetOptions{})
	})
	slices.Sort(out)
	return out
}

// Reload reads the manifests again and applies them.
func (m *ManifestCluster) Reload() error {
	objs, err := load(m.cfg.Loader, m.fsys, m.path)
	diags, err := loadDiagnostics(m.id, err)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.diags = diags
	m.mu.Unlock()
	return m.Apply(objs)
}

// Apply makes the cluster hold exactly objs: objects not held are
// created, changed ones updated, and those no longer in objs deleted.
// Istio objects other than WorkloadEntries outside the config cluster
// are reported and ignored.
func (m *ManifestCluster) Apply(objs []runtime.Object) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[objectKey]runtime.Object{}
	var ignored []model.Diagnostic
	for _, o := range objs {
		k, err := keyOf(o)
		if err != nil {
			return err
		}
		if k.name == "" {
			// An API server refuses an object without a name; the fake
			// one accepts it, and it would become a service or
			// workload named "".
			ignored = append(ignored, model.Diagnostic{
				Severity: model.Error, Kind: k.gvk.Kind, Namespace: k.namespace, Cluster: m.id,
				Message: msgNoName,
			})
			continue
		}
		if manifest.IsIstio(o) && !m.config && k.gvk.Kind != "WorkloadEntry" {
			ignored = append(ignored, model.Diagnostic{
				Severity: model.Warning, Kind: k.gvk.Kind, Namespace: k.namespace, Name: k.name, Cluster: m.id,
				Message: msgNotConfigCluster,
			})
			continue
		}
		want[k] = o
	}
	keys := slices.SortedFunc(func(yield func(objectKey) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
		for k := range m.applied {
			if _, ok := want[k]; !ok && !yield(k) {
				return
			}
		}
	}, compareObjectKeys)
	for _, k := range keys {
		old, had := m.applied[k]
		o, keep := want[k]
		var err error
		switch {
		case !keep:
			err = m.delete(k, old)
		case !had:
			err = m.create(o)
		case !equalObjects(old, o):
			err = m.update(o)
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", k.gvk.Kind, k.namespace, k.name, err)
		}
	}
	m.applied = want
	m.diags = append(slices.DeleteFunc(m.diags, func(d model.Diagnostic) bool {
		return d.Message == msgNotConfigCluster || d.Message == msgNoName
	}), ignored...)
	return nil
}

// Messages of the objects Apply ignores.
const (
	msgNotConfigCluster = "outside the config cluster (the first), only WorkloadEntries are read; ignored"
	msgNoName           = "metadata.name is missing; ignored"
)

func compareObjectKeys(a, b objectKey) int {
	return cmp.Or(cmp.Compare(a.gvk.Group, b.gvk.Group), cmp.Compare(a.gvk.Kind, b.gvk.Kind),
		cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
}

// equalObjects reports whether an applied object is unchanged. Istio
// objects hold protocol buffer messages, whose unexported fields make
// equality.Semantic.DeepEqual panic: they are compared field by field,
// messages with proto.Equal.
func equalObjects(a, b runtime.Object) bool {
	if manifest.IsIstio(a) || manifest.IsIstio(b) {
		return equalIstioObjects(a, b)
	}
	return equality.Semantic.DeepEqual(a, b)
}

// equalIstioObjects compares two Istio objects (pointers to structs of
// TypeMeta, ObjectMeta, Spec and Status): protocol buffer fields with
// proto.Equal, the others with equality.Semantic.DeepEqual. Objects it
// cannot compare are reported changed, which costs an update, never a
// missed one.
func equalIstioObjects(a, b runtime.Object) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || va.Kind() != reflect.Pointer || va.IsNil() || vb.IsNil() || va.Elem().Kind() != reflect.Struct {
		return false
	}
	va, vb = va.Elem(), vb.Elem()
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			return false
		}
		fa, fb := va.Field(i).Addr().Interface(), vb.Field(i).Addr().Interface()
		if ma, ok := fa.(proto.Message); ok {
			if !proto.Equal(ma, fb.(proto.Message)) {
				return false
			}
			continue
		}
		if !equality.Semantic.DeepEqual(fa, fb) {
			return false
		}
	}
	return true
}

// servingGatewayAPI makes a fake Gateway API clientset's discovery list
// the v1 Gateways and GatewayClasses, as a cluster with the CRDs
// installed does.
func servingGatewayAPI(c *gatewayfake.Clientset) *gatewayfake.Clientset {
	c.Resources = []*metav1.APIResourceList{{
		GroupVersion: "gateway.networking.k8s.io/v1",
		APIResources: []metav1.APIResource{
			{Name: "gateways", Namespaced: true, Kind: "Gateway"},
			{Name: "gatewayclasses", Kind: "GatewayClass"},
		},
	}}
	return c
}

// resourceOf returns the resource of a kind: client-go's guess, which
// spells the Gateway API's Gateways "gatewaies", corrected.
func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	if gvk.Group == "gateway.networking.k8s.io" && gvk.Kind == "Gateway" {
		gvr.Resource = "gateways"
	}
	return gvr
}

// tracker is the fake clientset an object belongs in.
func (m *ManifestCluster) tracker(o runtime.Object) k8stesting.ObjectTracker {
	switch {
	case manifest.IsGatewayAPI(o):
		return m.gateways.Tracker()
	case manifest.IsMCS(o):
		return m.mcs.Tracker()
	}
	return m.client.Tracker()
}

func (m *ManifestCluster) create(o runtime.Object) error {
	if manifest.IsIstio(o) {
		return m.se.apply(o, false)
	}
	if err := m.se.applyNamespace(o, false); err != nil {
		return err
	}
	if manifest.IsGatewayAPI(o) || manifest.IsMCS(o) {
		// By the object's own version: the scheme knows some types
		// under several, and Add would take the first.
		acc, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		return m.tracker(o).Create(resourceOf(o.GetObjectKind().GroupVersionKind()), o, acc.GetNamespace())
	}
	return m.client.Tracker().Add(o)
}

func (m *ManifestCluster) update(o runtime.Object) error {
	if manifest.IsIstio(o) {
		return m.se.apply(o, false)
	}
	if err := m.se.applyNamespace(o, false); err != nil {
		return err
	}
	acc, err := meta.Accessor(o)
	if err != nil {
		return err
	}
	return m.tracker(o).Update(resourceOf(o.GetObjectKind().GroupVersionKind()), o, acc.GetNamespace())
}

func (m *ManifestCluster) delete(k objectKey, old runtime.Object) error {
	if manifest.IsIstio(old) {
		return m.se.apply(old, true)
	}
	if err := m.se.applyNamespace(old, true); err != nil {
		return err
	}
	return m.tracker(old).Delete(resourceOf(k.gvk), k.namespace, k.name)
}
