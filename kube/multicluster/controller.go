package multicluster

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	informersv1 "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// SecretLabel is the label, with value "true", that marks a cluster
// Secret.
const SecretLabel = "istio/multiCluster"

// Controller watches cluster Secrets and keeps the target's cluster
// registries in step with them.
type Controller struct {
	opts     Options
	target   Target
	informer cache.SharedIndexInformer
	// handled reports whether the handler has taken the initial list
	// (the informer's own HasSynced says only that its cache holds it).
	handled cache.InformerSynced

	// mu guards the fields below and serialises event handling.
	mu sync.Mutex
	// secrets holds, per Secret, the kubeconfig of each cluster it
	// declares.
	secrets map[types.NamespacedName]map[model.ClusterID][]byte
	// owners holds, per cluster whose registry is in the target, what
	// the target holds of it (see reconcile.go).
	owners map[model.ClusterID]owner
	// diags by Secret.
	diags map[types.NamespacedName][]model.Diagnostic
	ran   bool
}

// New returns a controller over the Secrets of client's cluster.
func New(client kubernetes.Interface, target Target, opts Options) (*Controller, error) {
	opts = opts.defaults()
	if opts.Factory == nil {
		return nil, ErrNoFactory
	}
	c := &Controller{
		opts:    opts,
		target:  target,
		secrets: map[types.NamespacedName]map[model.ClusterID][]byte{},
		owners:  map[model.ClusterID]owner{},
		diags:   map[types.NamespacedName][]model.Diagnostic{},
	}
	c.informer = informersv1.NewFilteredSecretInformer(client, opts.Namespace, opts.ResyncPeriod, cache.Indexers{},
		func(lo *metav1.ListOptions) { lo.LabelSelector = SecretLabel + "=true" })
	// Keep only what the controller reads.
	if err := c.informer.SetTransform(stripSecret); err != nil {
		return nil, fmt.Errorf("multicluster: %w", err)
	}
	reg, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onSecret(obj, false) },
		UpdateFunc: func(_, obj any) { c.onSecret(obj, false) },
		DeleteFunc: func(obj any) { c.onSecret(obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("multicluster: %w", err)
	}
	c.handled = reg.HasSynced
	return c, nil
}

func stripSecret(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, ResourceVersion: s.ResourceVersion},
		Data:       s.Data,
	}, nil
}

// Run watches Secrets until ctx is done. It runs once: a second call
// returns an error wrapping registry.ErrAlreadyRunning.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		return fmt.Errorf("multicluster: %w", registry.ErrAlreadyRunning)
	}
	c.ran = true
	c.mu.Unlock()
	c.informer.RunWithContext(ctx)
	return nil
}

// HasSynced reports whether the initial list of Secrets was handled: the
// registries of the clusters it declares are in the target.
func (c *Controller) HasSynced() bool { return c.handled() }

// Clusters returns the clusters whose registries are in the target, sorted.
func (c *Controller) Clusters() []model.ClusterID {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]model.ClusterID, 0, len(c.owners))
	for id := range c.owners {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Diagnostics returns the problems found in cluster Secrets.
func (c *Controller) Diagnostics() []model.Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []model.Diagnostic
	for _, ds := range c.diags {
		out = append(out, ds...)
	}
	model.SortDiagnostics(out)
	return out
}

func (c *Controller) onSecret(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = t.Obj, true
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	name := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	c.mu.Lock()
	defer c.mu.Unlock()
	if deleted {
		delete(c.secrets, name)
	} else {
		clusters := make(map[model.ClusterID][]byte, len(s.Data))
		for k, v := range s.Data {
			clusters[model.ClusterID(k)] = v
		}
		c.secrets[name] = clusters
	}
	c.reconcile()
}

func sortedIDs[V any](m map[model.ClusterID]V) []model.ClusterID {
	out := make([]model.ClusterID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
