package aggregate

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Options configure an aggregate Controller. The zero value is valid; each
// field documents its default.
type Options struct {
	// Logger receives the aggregate's log records. Default: discard.
	Logger *slog.Logger

	// SyncTimeout bounds how long a registry may take to sync once the
	// aggregate runs it. A registry still not synced after it no longer
	// holds HasSynced back, and a diagnostic says so. Default: 0, wait
	// for ever.
	SyncTimeout time.Duration

	// ShareWorkload decides whether a workload instance of one registry
	// is handed to another registry's selectors: Pods to ServiceEntry
	// workloadSelectors, WorkloadEntries to Kubernetes Service selectors
	// and to other ServiceEntry registries' workloadSelectors. to is the
	// receiving registry's provider and cluster. Receivers apply their
	// own rules too: a kube controller selects a WorkloadEntry of another
	// cluster only when it is on no network or on the cluster's own, and
	// a serviceentry controller takes only WorkloadEntries addressed by
	// IP. Default: nil, ShareWithinCluster (as Istio: Pods of every
	// cluster reach ServiceEntries; WorkloadEntries reach the Services of
	// their own cluster and every ServiceEntry registry).
	// ShareAcrossClusters hands WorkloadEntries to every cluster's
	// Services too.
	ShareWorkload func(w *model.WorkloadInstance, to model.ShardKey) bool

	// MeshNetworks is Istio's meshNetworks: the gateways it gives by
	// address join every registry's (NetworkGateways), and it is handed
	// to each registry that takes it (registry.MeshNetworksHandler: the
	// kube controller, for the networks of its endpoints and the gateways
	// of the Services it names), when the registry is added.
	// ParseMeshNetworks reads Istio's YAML. Mesh networks that Istio's
	// validation refuses (see ParseMeshNetworks) are New's error. Default:
	// nil, none. The value must not be modified afterwards.
	MeshNetworks *model.MeshNetworks

	// SyncReportInterval is how long Run waits for the initial sync
	// before it logs, at Warn, what holds it back (each member's
	// PendingSync: which registries, and which of their informers by
	// kind and cluster), and how often it logs again while it waits. The
	// same is in PendingSync, debughttp's /sync and the
	// meshreg_sync_pending metric at any time. Give each member the same
	// Logger for its own records. Default 0:
	// registry.DefaultSyncReportInterval (10s); negative is New's error.
	SyncReportInterval time.Duration

	// SyncPollInterval is how often the aggregate looks again at whether
	// the workloads it handed between registries have been applied
	// (registry.Settler), while that alone holds its first sync back:
	// registries announce their own sync (registry.SyncedEvent), but not
	// settling. Default: 50ms.
	SyncPollInterval time.Duration

	// Metrics, when set, receives the aggregate's Prometheus metrics,
	// labelled registry="aggregate" and cluster="" (docs/OPERATING.md
	// lists them); give each member registry the same
	// Registerer in its own options for its metrics. The aggregate's are
	// registered by New and unregistered when Run returns; a Registerer
	// that refuses them (one of another aggregate) is New's error.
	// Default: nil, no metrics and no cost.
	Metrics prometheus.Registerer
}

// defaults returns o with every unset field given its default.
func (o Options) defaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ShareWorkload == nil {
		o.ShareWorkload = ShareWithinCluster
	}
	if o.SyncPollInterval <= 0 {
		o.SyncPollInterval = 50 * time.Millisecond
	}
	if o.SyncReportInterval == 0 {
		o.SyncReportInterval = registry.DefaultSyncReportInterval
	}
	// MeshNetworks: nil means none. Metrics: nil means none.
	// SyncTimeout: 0 is the default (no timeout).
	return o
}

// ShareWithinCluster is the default Options.ShareWorkload, Istio's rule
// (pilot/pkg/serviceregistry/kube/controller/multicluster.go, with its
// defaults):
//
//   - every Pod is shared, so that ServiceEntry workloadSelectors select
//     the Pods of every cluster (PILOT_ENABLE_SERVICEENTRY_SELECT_PODS);
//   - a WorkloadEntry is shared with the Kubernetes registries of its own
//     cluster only, so that a VM counts once, in the Services of that
//     cluster (PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES): the config
//     cluster's for the entries of the config cluster's serviceentry
//     controller, a remote cluster's for the entries of its
//     WorkloadEntriesOnly registry;
//   - and with every ServiceEntry registry (provider External), so that
//     the config cluster's ServiceEntries select a remote cluster's
//     WorkloadEntries of their namespace
//     (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY). A WorkloadEntriesOnly
//     registry takes none of it.
func ShareWithinCluster(w *model.WorkloadInstance, to model.ShardKey) bool {
	return w.Kind != model.KindWorkloadEntry || w.Endpoint.Cluster == to.Cluster || to.Provider == model.External
}

// ShareAcrossClusters is an Options.ShareWorkload that shares every
// workload with every registry: WorkloadEntries then reach the Services
// of every cluster (whose kube controllers still select only the entries
// they can reach directly, see kube.Controller.HandleWorkload), and each
// cluster's shard of a Service lists the entries it selects.
func ShareAcrossClusters(*model.WorkloadInstance, model.ShardKey) bool { return true }
