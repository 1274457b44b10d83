package multicluster

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	informersv1 "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// SecretLabel is the label, with value "true", that marks a cluster
// Secret.
const SecretLabel = "istio/multiCluster"

// Target receives the cluster registries. *aggregate.Controller is one.
type Target interface {
	Add(registry.Registry) error
	Replace(registry.Registry)
	Remove(provider model.Provider, cluster model.ClusterID) error
}

// Factory builds the registry of one cluster from its kubeconfig. The
// registry must report the given cluster ID and provider Kubernetes; it is
// run by the target.
type Factory func(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error)

// Options configure a Controller. The zero value is valid but for
// Factory, which is required.
type Options struct {
	// Namespace holds the cluster Secrets. Default: "istio-system".
	Namespace string
	// Factory builds a cluster's registry. Required.
	Factory Factory
	// LocalCluster is the ID of the cluster the Secrets live in. A Secret
	// entry for it is ignored, with a diagnostic, since that cluster is
	// registered by the caller. Default: "" (no such check).
	LocalCluster model.ClusterID
	// Logger receives log records. Default: discard.
	Logger *slog.Logger
	// ResyncPeriod of the Secret informer. Default: 0, no resync.
	ResyncPeriod time.Duration
}

func (o Options) defaults() Options {
	if o.Namespace == "" {
		o.Namespace = "istio-system"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// Factory: required; LocalCluster: "" is the default; ResyncPeriod: 0.
	return o
}

// ErrNoFactory is returned by New when Options.Factory is nil.
var ErrNoFactory = errors.New("multicluster: Options.Factory is required")

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
	// owners holds, per cluster, the Secret whose registry is in the
	// target and the kubeconfig it was built from.
	owners map[model.ClusterID]owner
	// diags by Secret.
	diags map[types.NamespacedName][]model.Diagnostic
	ran   bool
}

type owner struct {
	secret     types.NamespacedName
	kubeconfig []byte
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

// Run watches Secrets until ctx is done. It runs once.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		return errors.New("multicluster: Run called twice")
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

// reconcile brings the target in line with the Secrets. Each cluster is
// owned by the first Secret, by namespace and name, that declares it, so
// the outcome does not depend on event order. The caller holds c.mu.
func (c *Controller) reconcile() {
	c.diags = map[types.NamespacedName][]model.Diagnostic{}
	want := map[model.ClusterID]owner{}
	names := make([]types.NamespacedName, 0, len(c.secrets))
	for n := range c.secrets {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, n := range names {
		ids := make([]model.ClusterID, 0, len(c.secrets[n]))
		for id := range c.secrets[n] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			switch prev, taken := want[id]; {
			case id == "":
				c.diag(n, "", "a data key is empty; it names no cluster and was ignored")
			case c.opts.LocalCluster != "" && id == c.opts.LocalCluster:
				c.diag(n, id, "names the local cluster; its registry is the caller's, and this entry was ignored")
			case taken:
				c.diag(n, id, fmt.Sprintf("cluster %s is already declared by Secret %s; this entry was ignored", id, prev.secret))
			default:
				want[id] = owner{secret: n, kubeconfig: c.secrets[n][id]}
			}
		}
	}
	// Remove the clusters no longer declared, then add or replace.
	for _, id := range sortedIDs(c.owners) {
		if _, ok := want[id]; !ok {
			if err := c.target.Remove(model.Kubernetes, id); err != nil {
				c.opts.Logger.Warn("removing cluster registry", "cluster", string(id), "err", err)
			}
			delete(c.owners, id)
			c.opts.Logger.Info("cluster removed", "cluster", string(id))
		}
	}
	for _, id := range sortedIDs(want) {
		w := want[id]
		cur, have := c.owners[id]
		if have && bytes.Equal(cur.kubeconfig, w.kubeconfig) {
			if cur.secret != w.secret {
				c.owners[id] = w
			}
			continue
		}
		reg, err := c.opts.Factory(id, w.kubeconfig)
		if err != nil {
			c.diag(w.secret, id, fmt.Sprintf("cannot build the cluster's registry: %v; %s", err, keptOrSkipped(have)))
			continue
		}
		if have {
			c.target.Replace(reg)
			c.opts.Logger.Info("cluster replaced", "cluster", string(id), "secret", w.secret.String())
		} else if err := c.target.Add(reg); err != nil {
			c.diag(w.secret, id, fmt.Sprintf("cannot add the cluster's registry: %v", err))
			continue
		} else {
			c.opts.Logger.Info("cluster added", "cluster", string(id), "secret", w.secret.String())
		}
		c.owners[id] = w
	}
}

func keptOrSkipped(have bool) string {
	if have {
		return "the registry built from the previous kubeconfig is kept"
	}
	return "the cluster is not registered"
}

func (c *Controller) diag(secret types.NamespacedName, cluster model.ClusterID, msg string) {
	c.diags[secret] = append(c.diags[secret], model.Diagnostic{
		Severity: model.Error, Kind: "Secret", Namespace: secret.Namespace, Name: secret.Name,
		Cluster: cluster, Message: msg,
	})
}

func sortedIDs[V any](m map[model.ClusterID]V) []model.ClusterID {
	out := make([]model.ClusterID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// ClientFactory returns a Factory that reads the kubeconfig, makes a
// clientset from it, and hands that to build, which makes the registry
// (typically with kube.New).
func ClientFactory(build func(cluster model.ClusterID, client kubernetes.Interface) (registry.Registry, error)) Factory {
	return func(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error) {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("making a client: %w", err)
		}
		return build(cluster, client)
	}
}
