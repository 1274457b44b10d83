package kube

import (
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshreg/meshreg/model"
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
	// labelled registry="Kubernetes" and cluster (the README's
	// "Operating meshreg" lists them), from New until Run returns.
	// Default: nil, no metrics and no cost.
	Metrics prometheus.Registerer
}

// Defaults, exported for documentation and tests.
const (
	DefaultClusterID       model.ClusterID = "Kubernetes"
	DefaultSystemNamespace                 = "istio-system"
)

// Istio's persistent-session labels: Options.DrainingLabels is both by
// default.
const (
	LabelPersistentSession       = "istio.io/persistent-session"
	LabelPersistentSessionHeader = "istio.io/persistent-session-header"
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
	if o.InitialSyncWorkers == 0 {
		o.InitialSyncWorkers = runtime.GOMAXPROCS(0)
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
	if o.InitialSyncWorkers < 0 {
		return fmt.Errorf("kube: negative InitialSyncWorkers %d", o.InitialSyncWorkers)
	}
	return nil
}
