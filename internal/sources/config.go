package sources

import (
	"fmt"

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

// configSource is the config cluster's ServiceEntries and WorkloadEntries,
// read from manifests into a static source.
type configSource struct {
	src *serviceentry.StaticSource
	reg *serviceentry.Controller
}

func serviceEntryOptions(cfg Config, id model.ClusterID) serviceentry.Options {
	return serviceentry.Options{
		ClusterID:         id,
		TrustDomain:       cfg.TrustDomain,
		DomainSuffix:      cfg.DomainSuffix,
		NamespaceSelector: cfg.NamespaceSelector,
		Logger:            cfg.Logger.With("cluster", string(id), "provider", "External"),
	}
}

func newConfigSource(cfg Config, id model.ClusterID) (*configSource, error) {
	src, err := serviceentry.NewStaticSource()
	if err != nil {
		return nil, err
	}
	reg, err := serviceentry.New(src, serviceEntryOptions(cfg, id))
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

// applyNamespace hands a Namespace of the config cluster (other objects
// are skipped) to the source too, for the namespace selector.
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

// liveConfigRegistry watches the config cluster's ServiceEntries and
// WorkloadEntries, and with a namespace selector its namespaces through
// kc.
func liveConfigRegistry(cfg Config, id model.ClusterID, rc *rest.Config, kc kubernetes.Interface) (registry.Registry, error) {
	client, err := istioclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("istio client: %w", err)
	}
	var opts serviceentry.InformerOptions
	if cfg.NamespaceSelector != nil {
		opts.Namespaces = kc
	}
	src, err := serviceentry.NewInformerSource(client, opts)
	if err != nil {
		return nil, err
	}
	return serviceentry.New(src, serviceEntryOptions(cfg, id))
}
