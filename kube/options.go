package kube

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Options configure a Controller. The zero value is valid: every field
// documents its default.
type Options struct {
	// ClusterID names the cluster: it is the cluster of every VIP,
	// endpoint, workload and diagnostic of the controller. Default
	// "Kubernetes".
	ClusterID model.ClusterID

	// DomainSuffix is the DNS suffix of service hostnames
	// (name.namespace.svc.<suffix>). Default "cluster.local".
	DomainSuffix string

	// TrustDomain is the trust domain of SPIFFE identities. Default
	// "cluster.local".
	TrustDomain string

	// NamespaceSelector limits the controller to the namespaces whose
	// labels it selects, like Istio's discoverySelectors: objects of
	// other namespaces are ignored, and a namespace whose labels change
	// brings all its objects in or takes them all out. Default nil:
	// every namespace. (An empty, non-nil selector also selects every
	// namespace, but only namespaces that exist.)
	NamespaceSelector *metav1.LabelSelector

	// SystemNamespace is the namespace whose topology.istio.io/network
	// label gives the cluster's network when Network is "". Default
	// "istio-system".
	SystemNamespace string

	// Network is the cluster's network: the network of every workload
	// without a topology.istio.io/network label. Default "": the label
	// of SystemNamespace, else NetworkCIDRs.
	Network model.NetworkID

	// NetworkCIDRs map address ranges to networks, for workloads that
	// get no network from their label or from the cluster; the most
	// specific range holding the workload's primary address wins.
	// Default nil: none.
	NetworkCIDRs map[netip.Prefix]model.NetworkID

	// Logger receives the controller's logs. Default: a logger that
	// discards everything.
	Logger *slog.Logger

	// SyncReportInterval is how long Run waits for the initial sync
	// before it logs, at Warn, what holds it back (the informers that
	// have not delivered their lists, by kind; see PendingSync), and how
	// often it logs again while it waits. The same is in PendingSync,
	// debughttp's /sync and the meshreg_sync_pending metric at any time.
	// Default 0: registry.DefaultSyncReportInterval (10s).
	SyncReportInterval time.Duration

	// ResyncPeriod is the informers' resync period. Default 0: no
	// resync (the controller's state does not drift, so it needs none).
	ResyncPeriod time.Duration

	// DrainingLabels are the Service labels that make a Service drain
	// its endpoints: a terminating endpoint that still serves is then
	// Draining rather than Terminating (Istio's persistent-session
	// labels, PILOT_PERSISTENT_SESSION_LABEL and
	// PILOT_PERSISTENT_SESSION_HEADER_LABEL). A Service drains when it
	// has any of them with a non-empty value. Default nil:
	// LabelPersistentSession and LabelPersistentSessionHeader; an empty,
	// non-nil list: no Service drains.
	DrainingLabels []string

	// InitialSyncWorkers is how many goroutines, Run's included, compute
	// pods' workloads and services' endpoints in the initial conversion,
	// once the informers have delivered their lists; later changes are
	// converted one at a time.
	// Default 0: runtime.GOMAXPROCS. 1 converts on Run's goroutine alone.
	InitialSyncWorkers int

	// GatewayClient, when set, is the cluster's Gateway API client: the
	// controller then reads the Gateways labelled
	// topology.istio.io/network as network gateways (Istio's
	// PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API). When the cluster does
	// not serve gateway.networking.k8s.io/v1 Gateways (the CRD is not
	// installed), Run logs it and reads none; when it cannot tell (the
	// discovery request fails), it reads none and says so in a
	// diagnostic. Default nil: none read.
	GatewayClient gatewayclient.Interface

	// GatewayNamespaces are the namespaces whose Services and Gateways
	// may declare network gateways. Default nil: every namespace, as in
	// Istio. A mesh whose namespaces belong to tenants that do not trust
	// each other should name the namespaces its gateways run in (the
	// system namespace, usually): otherwise any tenant's Service
	// labelled topology.istio.io/network, once it has an address, is a
	// gateway into that network, which proxies on other networks send
	// the network's traffic to. A candidate elsewhere is ignored with a
	// diagnostic.
	GatewayNamespaces []string

	// ConfigCluster says that the cluster is the mesh's config cluster:
	// only there are Gateways of class istio-remote read. Default false.
	ConfigCluster bool

	// Metrics, when set, receives the controller's Prometheus metrics,
	// labelled registry="Kubernetes" and cluster (docs/OPERATING.md
	// lists them), from New until Run returns. A
	// controller that replaces another of its cluster on the same
	// Registerer shares the cluster's series with it while both exist.
	// Default: nil, no metrics and no cost.
	Metrics prometheus.Registerer
	// Informers, when set, are the control plane's own informers of
	// Services, EndpointSlices, Pods, Nodes and Namespaces, which the
	// controller shares instead of opening informers of its own: the
	// cluster is then watched and held once. The controller adds a
	// handler to each when Run starts and removes it when Run returns;
	// the caller runs the informers (a SharedInformerFactory's Start,
	// controller-runtime's manager), and the controller syncs once its
	// handlers have had their initial lists. The trade: a shared cache
	// holds its owner's objects whole, where the controller's own
	// informers keep only what it reads (see BENCHMARKS.md), and the
	// relist metric counts nothing. FactoryInformers takes them from a
	// client-go SharedInformerFactory; SharedInformers.Gateways shares
	// the Gateway API's too. Default: nil, informers of the controller's
	// own over New's client.
	Informers *SharedInformers
	// MCS configures Kubernetes Multi-Cluster Services: the MCS API's
	// ServiceExports and ServiceImports (multicluster.x-k8s.io/v1alpha1,
	// the version Istio reads), as Istio's three switches do. Default:
	// every switch off, as in Istio.
	MCS MCSOptions
}

// MCSOptions configure Kubernetes Multi-Cluster Services. Each switch
// needs the one before it, as in Istio (where a switch without the one
// before has no effect; here New refuses it).
type MCSOptions struct {
	// Client is the cluster's MCS API client, through which the
	// controller reads ServiceExports and ServiceImports. Required by
	// ServiceDiscovery. When the cluster does not serve the MCS API (its
	// CRDs are not installed), Run logs it and looks again every
	// CheckInterval; until it does, no Service is exported. Default nil.
	Client mcsclient.Interface

	// ServiceDiscovery is Istio's ENABLE_MCS_SERVICE_DISCOVERY: a
	// Service's endpoints in this cluster may be sent to other clusters'
	// proxies (model.AlwaysDiscoverable) only while the cluster has a
	// ServiceExport of the Service's name; otherwise only to this
	// cluster's (model.DiscoverableFromSameCluster). Default false: every
	// endpoint is always discoverable.
	ServiceDiscovery bool

	// Host is Istio's ENABLE_MCS_HOST: a ServiceImport of this cluster
	// with ClusterSet IPs (spec.ips) gives the service
	// name.namespace.svc.clusterset.local, with those IPs as its VIPs in
	// this cluster, and one of type Headless gives it as Passthrough;
	// its endpoints here are those of the cluster's Service of that
	// name, discoverable from other clusters while the cluster exports
	// it. An aggregate gives it the attributes of the merged Service, and
	// the endpoints of the clusters that do not import it (see the
	// aggregate package). Needs ServiceDiscovery. Default false.
	Host bool

	// ClusterLocal is Istio's ENABLE_MCS_CLUSTER_LOCAL: the endpoints of
	// name.namespace.svc.cluster.local are for this cluster's proxies
	// only (model.DiscoverableFromSameCluster), as the MCS API defines
	// cluster.local; other clusters reach the Service through its
	// clusterset.local host. Needs Host. Default false.
	ClusterLocal bool

	// CheckInterval is how often Run looks again for the MCS API while
	// the cluster does not serve it, or the look failed. Default
	// DefaultMCSCheckInterval.
	CheckInterval time.Duration
}

// DefaultMCSCheckInterval is MCSOptions.CheckInterval's default.
const DefaultMCSCheckInterval = 30 * time.Second

// Defaults, exported for documentation and tests.
const (
	DefaultClusterID       model.ClusterID = "Kubernetes"
	DefaultSystemNamespace                 = "istio-system"
)

// Istio's persistent-session labels: Options.DrainingLabels is both by
// default (the rule is model's: see model.LabelPersistentSession).
const (
	LabelPersistentSession       = model.LabelPersistentSession
	LabelPersistentSessionHeader = model.LabelPersistentSessionHeader
)

// defaults returns o with every unset field given its default. It is the
// one place defaults are decided.
func (o Options) defaults() Options {
	if o.ClusterID == "" {
		o.ClusterID = DefaultClusterID
	}
	if o.DomainSuffix == "" {
		o.DomainSuffix = model.DefaultDomainSuffix
	}
	if o.TrustDomain == "" {
		o.TrustDomain = model.DefaultTrustDomain
	}
	// NamespaceSelector: nil means every namespace.
	if o.SystemNamespace == "" {
		o.SystemNamespace = DefaultSystemNamespace
	}
	// Network: "" means the system namespace's label.
	// NetworkCIDRs: nil means no ranges.
	// GatewayClient: nil reads no Gateways.
	// ConfigCluster: false.
	// GatewayNamespaces: nil means every namespace.
	// Metrics: nil means none.
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DrainingLabels == nil {
		o.DrainingLabels = []string{LabelPersistentSession, LabelPersistentSessionHeader}
	}
	// ResyncPeriod: 0 means no resync.
	// MCS: every switch off, no client.
	if o.MCS.CheckInterval == 0 {
		o.MCS.CheckInterval = DefaultMCSCheckInterval
	}
	if o.InitialSyncWorkers == 0 {
		o.InitialSyncWorkers = runtime.GOMAXPROCS(0)
	}
	if o.SyncReportInterval == 0 {
		o.SyncReportInterval = registry.DefaultSyncReportInterval
	}
	return o
}

// namespaceSelector converts the option into a labels.Selector; nil for
// "every namespace".
func (o Options) namespaceSelector() (labels.Selector, error) {
	if o.NamespaceSelector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(o.NamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("kube: invalid NamespaceSelector: %w", err)
	}
	return sel, nil
}

// validate checks the options that can be wrong.
func (o Options) validate() error {
	for p := range o.NetworkCIDRs {
		if !p.IsValid() {
			return fmt.Errorf("kube: invalid NetworkCIDRs prefix %v", p)
		}
	}
	if o.ResyncPeriod < 0 {
		return fmt.Errorf("kube: negative ResyncPeriod %v", o.ResyncPeriod)
	}
	if o.SyncReportInterval < 0 {
		return fmt.Errorf("kube: negative SyncReportInterval %v", o.SyncReportInterval)
	}
	if o.InitialSyncWorkers < 0 {
		return fmt.Errorf("kube: negative InitialSyncWorkers %d", o.InitialSyncWorkers)
	}
	if o.Informers != nil {
		if err := o.Informers.validate(); err != nil {
			return err
		}
		if o.Informers.Gateways != nil && o.GatewayClient != nil {
			return errors.New("kube: both Options.GatewayClient and Options.Informers.Gateways: Gateways are read from one")
		}
	}
	return o.MCS.validate()
}

// validate checks that each MCS switch has the one it needs.
func (o MCSOptions) validate() error {
	switch {
	case o.ServiceDiscovery && o.Client == nil:
		return errors.New("kube: MCS.ServiceDiscovery needs MCS.Client, to read ServiceExports")
	case o.Host && !o.ServiceDiscovery:
		return errors.New("kube: MCS.Host needs MCS.ServiceDiscovery, as Istio's ENABLE_MCS_HOST needs ENABLE_MCS_SERVICE_DISCOVERY")
	case o.ClusterLocal && !o.Host:
		return errors.New("kube: MCS.ClusterLocal needs MCS.Host, as Istio's ENABLE_MCS_CLUSTER_LOCAL needs ENABLE_MCS_HOST")
	case o.CheckInterval < 0:
		return fmt.Errorf("kube: negative MCS.CheckInterval %v", o.CheckInterval)
	}
	return nil
}
