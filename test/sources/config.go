package sources

import (
	"fmt"
	"time"

	istioclient "istio.io/client-go/pkg/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// configSource is a cluster's Istio configuration, read from manifests
// into a static source: the config cluster's ServiceEntries and
// WorkloadEntries, or another cluster's WorkloadEntries alone (a
// WorkloadEntriesOnly registry), as istiod reads them.
type configSource struct {
	src *serviceentry.StaticSource
	reg *serviceentry.Controller
}

// serviceEntryOptions are the options of a cluster's serviceentry
// registry: the full one of the config cluster, or the WorkloadEntry
// registry of another.
func serviceEntryOptions(cfg Config, id model.ClusterID, config bool) serviceentry.Options {
	return serviceentry.Options{
		ClusterID:           id,
		TrustDomain:         cfg.TrustDomain,
		DomainSuffix:        cfg.DomainSuffix,
		NamespaceSelector:   cfg.NamespaceSelector,
		Visibility:          cfg.ServiceEntryVisibility,
		Logger:              cfg.Logger.With("cluster", string(id), "provider", "External"),
		WorkloadEntriesOnly: !config,
		Metrics:             cfg.Metrics,
	}
}

func newConfigSource(cfg Config, id model.ClusterID, config bool) (*configSource, error) {
	src, err := serviceentry.NewStaticSource()
	if err != nil {
		return nil, err
	}
	reg, err := serviceentry.New(src, serviceEntryOptions(cfg, id, config))
	if err != nil {
		return nil, err
	}
	return &configSource{src: src, reg: reg}, nil
}

func (c *configSource) registry() registry.Registry { return c.reg }

// apply upserts or deletes one ServiceEntry or WorkloadEntry. Other Istio
// kinds are not the registry's business and are skipped.
func (c *configSource) apply(o runtime.Object, deleted bool) error {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if kind != "ServiceEntry" && kind != "WorkloadEntry" {
		return nil
	}
	if !deleted {
		return c.src.Upsert(o)
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return err
	}
	if kind == "ServiceEntry" {
		c.src.DeleteServiceEntry(m.GetNamespace(), m.GetName())
	} else {
		c.src.DeleteWorkloadEntry(m.GetNamespace(), m.GetName())
	}
	return nil
}

// applyNamespace hands a Namespace of the cluster (other objects are
// skipped) to the source too, for the namespace selector.
func (c *configSource) applyNamespace(o runtime.Object, deleted bool) error {
	ns, ok := o.(*corev1.Namespace)
	switch {
	case c == nil || !ok:
		return nil
	case deleted:
		c.src.DeleteNamespace(ns.Name)
		return nil
	}
	return c.src.Upsert(ns)
}

// liveConfigRegistry watches a live cluster's Istio configuration: the
// config cluster's ServiceEntries and WorkloadEntries, another cluster's
// WorkloadEntries alone (waiting for the CRD if the cluster has none, as
// Istio does there), and with a namespace selector its namespaces
// through kc.
func liveConfigRegistry(cfg Config, id model.ClusterID, config bool, rc *rest.Config, kc kubernetes.Interface) (registry.Registry, error) {
	client, err := istioclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("istio client: %w", err)
	}
	var opts serviceentry.InformerOptions
	if cfg.NamespaceSelector != nil || cfg.ServiceEntryVisibility != nil {
		opts.Namespaces = kc
	}
	if !config {
		opts.WorkloadEntriesOnly = true
		opts.CRDPollInterval = crdPollInterval
	}
	src, err := serviceentry.NewInformerSource(client, opts)
	if err != nil {
		return nil, err
	}
	return serviceentry.New(src, serviceEntryOptions(cfg, id, config))
}

// crdPollInterval is how often a live cluster other than the config
// cluster, which does not serve WorkloadEntries, is asked again.
const crdPollInterval = 10 * time.Second
