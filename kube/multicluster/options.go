package multicluster

import (
	"errors"
	"log/slog"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// Target receives the cluster registries. *aggregate.Controller is one.
type Target interface {
	Add(registry.Registry) error
	Replace(registry.Registry) error
	Remove(provider model.Provider, cluster model.ClusterID) error
}

// Factory builds a registry of one cluster from its kubeconfig: the
// cluster's Kubernetes registry (Options.Factory, provider Kubernetes) or
// its WorkloadEntry registry (Options.WorkloadEntries, provider
// External). The registry must report the given cluster ID and that
// provider; it is run by the target. A Factory should only read the
// kubeconfig and make clients: the controller calls it while it handles
// a Secret, and a registry reaches its cluster when it runs.
type Factory func(cluster model.ClusterID, kubeconfig []byte) (registry.Registry, error)

// Options configure a Controller. The zero value is valid but for
// Factory, which is required.
type Options struct {
	// Namespace holds the cluster Secrets. Default: "istio-system".
	Namespace string
	// Factory builds a cluster's Kubernetes registry. Required.
	Factory Factory
	// WorkloadEntries builds the registry of a cluster's WorkloadEntries,
	// which the controller adds, replaces and removes with the cluster's
	// Factory registry: Istio reads the WorkloadEntries of every cluster,
	// not only the config cluster's, so that a VM registered in a remote
	// cluster joins that cluster's Services and the config cluster's
	// ServiceEntries (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY; the
	// aggregate's default wiring, aggregate.ShareWithinCluster, does the
	// rest). Its registries must report provider External: a
	// serviceentry controller with Options.WorkloadEntriesOnly. When the
	// target already holds an External registry for the cluster (a
	// registry of the caller's), that one is kept, with a diagnostic.
	// Default nil: WorkloadEntryFactory(WorkloadEntryOptions{}) with
	// Logger, which watches networking.istio.io/v1 WorkloadEntries with
	// serviceentry's defaults (trust domain cluster.local): set it when
	// the Factory's registries use another trust domain, domain suffix or
	// namespace selector.
	WorkloadEntries Factory
	// SkipWorkloadEntries leaves the clusters' WorkloadEntries unread
	// (Istio's PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY=false): only the
	// Factory's registry is built. Default false: read, as in Istio.
	SkipWorkloadEntries bool
	// LocalCluster is the ID of the cluster the Secrets live in. A Secret
	// entry for it is ignored, with a diagnostic, since that cluster is
	// registered by the caller. Default: "" (no such check).
	LocalCluster model.ClusterID
	// Logger receives log records. Default: discard.
	Logger *slog.Logger
	// ResyncPeriod of the Secret informer. Default: 0, no resync.
	ResyncPeriod time.Duration
}

// DefaultNamespace is the default Options.Namespace.
const DefaultNamespace = "istio-system"

func (o Options) defaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WorkloadEntries == nil {
		o.WorkloadEntries = WorkloadEntryFactory(WorkloadEntryOptions{Registry: serviceentry.Options{Logger: o.Logger}})
	}
	// Factory: required; SkipWorkloadEntries: false; LocalCluster: "" is
	// the default; ResyncPeriod: 0.
	return o
}

// ErrNoFactory is returned by New when Options.Factory is nil.
var ErrNoFactory = errors.New("multicluster: Options.Factory is required")

// WorkloadEntryOptions configure the registries of WorkloadEntryFactory.
// The zero value is valid.
type WorkloadEntryOptions struct {
	// Registry are the options of each cluster's serviceentry
	// controller: give it the TrustDomain, DomainSuffix and
	// NamespaceSelector of the cluster's kube registry (with a
	// NamespaceSelector, the cluster's Namespaces are watched too,
	// through a Kubernetes client of the same kubeconfig). ClusterID is
	// the cluster's and WorkloadEntriesOnly is set, whatever they say;
	// the Logger gets the cluster as an attribute. Default: serviceentry's
	// defaults.
	Registry serviceentry.Options
	// CRDPollInterval is how often a cluster that does not serve
	// WorkloadEntries (Istio's CRDs are not installed there) is asked
	// again; meanwhile its registry is synced and empty
	// (serviceentry.InformerOptions.CRDPollInterval). Default:
	// DefaultCRDPollInterval.
	CRDPollInterval time.Duration
	// ResyncPeriod of the WorkloadEntry informer. Default: 0, no resync.
	ResyncPeriod time.Duration
}

// DefaultCRDPollInterval is the default WorkloadEntryOptions.CRDPollInterval.
const DefaultCRDPollInterval = 10 * time.Second

func (o WorkloadEntryOptions) defaults() WorkloadEntryOptions {
	if o.CRDPollInterval == 0 {
		o.CRDPollInterval = DefaultCRDPollInterval
	}
	// Registry: serviceentry.New fills its defaults; ResyncPeriod: 0.
	return o
}
