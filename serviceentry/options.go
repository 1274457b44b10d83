package serviceentry

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// DefaultClusterID is the cluster a ServiceEntry registry reports its VIPs
// and endpoints under when Options.ClusterID is empty.
const DefaultClusterID model.ClusterID = "Kubernetes"

// Options configure a Controller. The zero value is valid: every field
// documents its default, filled in by New.
type Options struct {
	// ClusterID is the cluster the registry's service VIPs and endpoints
	// are reported under. Default: DefaultClusterID ("Kubernetes").
	ClusterID model.ClusterID
	// TrustDomain is the trust domain of the SPIFFE identities made from
	// WorkloadEntry and endpoint service accounts. Default:
	// model.DefaultTrustDomain ("cluster.local").
	TrustDomain string
	// DomainSuffix is the cluster's DNS suffix. ServiceEntry hosts are
	// used as written, so the registry does not need it today; it is
	// kept so that the kube and serviceentry options agree. Default:
	// model.DefaultDomainSuffix ("cluster.local").
	DomainSuffix string
	// NamespaceSelector limits the registry to the ServiceEntries and
	// WorkloadEntries of the namespaces whose labels it selects, as
	// Istio's discoverySelectors limit its config: the objects of other
	// namespaces are ignored, and a namespace whose labels change brings
	// all its objects in or takes them all out. It needs a Source that
	// holds namespaces (NamespaceSource: a StaticSource, or an
	// InformerSource with InformerOptions.Namespaces). Default nil: every
	// namespace. (An empty, non-nil selector also selects every
	// namespace, but only namespaces that exist.)
	NamespaceSelector *metav1.LabelSelector
	// Visibility is the mesh config's serviceEntryVisibility (package
	// meshconfig reads it): each entry's services carry the visibility
	// it gives the entry's namespace by its labels (model.Service.
	// Visibility), which consumers apply. Namespace labels come from a
	// NamespaceSource (a StaticSource, or an InformerSource with
	// InformerOptions.Namespaces); without one every namespace has none.
	// Default nil: every entry Public, Istio's default.
	Visibility *model.ServiceEntryVisibility
	// Logger receives the controller's logs. Default: a silent logger.
	Logger *slog.Logger
	// SyncReportInterval is how long Run waits for the initial sync
	// before it logs, at Warn, what holds it back (the source's kinds
	// whose informers have not listed; see PendingSync), and how often
	// it logs again while it waits. The same is in PendingSync,
	// debughttp's /sync and the meshreg_sync_pending metric at any time.
	// Default 0: registry.DefaultSyncReportInterval (10s).
	SyncReportInterval time.Duration
	// WorkloadEntriesOnly makes the controller a cluster's WorkloadEntry
	// registry, as Istio's WorkloadEntry controller
	// (serviceentry.NewWorkloadEntryController), which istiod runs for
	// every cluster but the config cluster: it publishes the source's
	// WorkloadEntries as workload instances under ClusterID, validated
	// and health-checked as in a full registry, so that the aggregate
	// hands them to that cluster's Kubernetes Services and to the
	// ServiceEntries of every ServiceEntry registry (see
	// aggregate.ShareWithinCluster); their endpoints carry ClusterID.
	// It ignores the source's ServiceEntries (without diagnostics: Istio
	// does not read them there), so it has no services, endpoints or
	// VIPs, and it takes no workloads from other registries
	// (HandleWorkload ignores every event). Default false: the full
	// registry of ServiceEntries and WorkloadEntries, for the config
	// cluster.
	WorkloadEntriesOnly bool
	// Metrics, when set, receives the controller's Prometheus metrics,
	// labelled registry="External" and cluster (docs/OPERATING.md lists
	// them), from New until Run returns. Default: nil, no
	// metrics and no cost.
	Metrics prometheus.Registerer
}

// defaults returns o with every unset field set to its default.
func (o Options) defaults() Options {
	if o.ClusterID == "" {
		o.ClusterID = DefaultClusterID
	}
	if o.TrustDomain == "" {
		o.TrustDomain = model.DefaultTrustDomain
	}
	if o.DomainSuffix == "" {
		o.DomainSuffix = model.DefaultDomainSuffix
	}
	// NamespaceSelector: nil means every namespace.
	// WorkloadEntriesOnly: false, the full registry.
	// Metrics: nil means none.
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SyncReportInterval == 0 {
		o.SyncReportInterval = registry.DefaultSyncReportInterval
	}
	return o
}
