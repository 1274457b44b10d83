package serviceentry

import (
	"log/slog"

	"github.com/meshreg/meshreg/model"
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
	// Logger receives the controller's logs. Default: a silent logger.
	Logger *slog.Logger
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
