package proxyview

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/meshreg/meshreg/model"
)

// DefaultDiscoveryAddress is Istio's default discovery address (the mesh's
// defaultConfig.discoveryAddress); its host is cluster-local unless the
// service settings say otherwise.
const DefaultDiscoveryAddress = "istiod.istio-system.svc:15012"

// Labels the view reads (the rule is model's: see
// model.LabelPersistentSession).
const (
	// PersistentSessionLabel marks a service whose clients keep sessions
	// on an endpoint: only such services are sent draining endpoints.
	PersistentSessionLabel = model.LabelPersistentSession
	// DrainingLabel on an endpoint (any value) makes it Draining.
	DrainingLabel = model.LabelDraining
)

// Options configure a View. The zero value is valid: every field's
// default is Istio's.
type Options struct {
	// DomainSuffix is the suffix of Kubernetes service hostnames, used
	// by the default cluster-local hosts. Default: "cluster.local".
	DomainSuffix string
	// DefaultServiceExportTo is the mesh's defaultServiceExportTo: the
	// visibility of services that declare no exportTo. Values are "*",
	// ".", "~" or namespace names. Default: ["*"]. Istio has one default
	// for Kubernetes Services and ServiceEntries alike.
	DefaultServiceExportTo []string
	// ServiceEntryVisibility caps a ServiceEntry's exportTo by its
	// visibility (model.Service.Visibility, which the serviceentry
	// registry's Options.Visibility gives it): Istio's mesh config
	// serviceEntryVisibility.applyToSidecars. Default false: exportTo
	// alone, as Istio's sidecars.
	ServiceEntryVisibility bool
	// ServiceSettings are the mesh's serviceSettings: hosts (exact, or
	// "*." wildcards) and whether they are cluster-local. They come
	// before the defaults, "*.kube-system.svc.<suffix>",
	// "kubernetes.default.svc.<suffix>" and the discovery address's host;
	// a setting that makes one of those hosts (or, for the wildcard, a
	// host under it) not cluster-local removes that default.
	ServiceSettings []ServiceSetting
	// DiscoveryAddress is the control plane's address, "host:port"; its
	// host (with the domain suffix when it lacks it) is cluster-local by
	// default. Default: DefaultDiscoveryAddress.
	DiscoveryAddress string
	// OmitUnhealthyEndpoints leaves Unhealthy endpoints out of Endpoints,
	// except for services with a trafficDistribution, whose clients need
	// them to know when to spill over. Default: false, Istio's
	// PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS=true: unhealthy endpoints are
	// sent, marked Unhealthy, and the proxy does not use them.
	OmitUnhealthyEndpoints bool
	// DirectWithoutGateway sends the endpoints of a network that has no
	// gateway to proxies on other networks as they are, as Istio does for
	// sidecars. Default: false, such endpoints are left out (Istio's
	// ambient behaviour): an address on another network is not
	// reachable without a gateway. It matters only when some network has
	// a gateway; with none in the mesh, every endpoint is sent directly.
	DirectWithoutGateway bool
	// TopologyHints applies EndpointSlice topology hints as kube-proxy
	// does: a proxy gets only the endpoints hinted for its node, or else
	// its zone, when every Healthy endpoint has such hints and one names
	// the proxy's; otherwise all. Default: false, as Istio, which does not
	// read hints (it applies a traffic distribution by failover
	// priorities, which the view always does).
	TopologyHints bool
	// DualStack gives a dual-stack proxy the VIPs of both IP families.
	// Default: false, Istio's ISTIO_DUAL_STACK: a proxy gets the VIPs of
	// one family, that of the service's first VIP.
	DualStack bool
	// Resolver resolves the host names network gateways are given by
	// (a LoadBalancer's host name): each address is a gateway. Default:
	// net.DefaultResolver (Istio's RESOLVE_HOSTNAME_GATEWAYS=true).
	Resolver Resolver
	// SkipGatewayHostnames leaves out gateways given by host name, so
	// that the view makes no lookups. Default: false.
	SkipGatewayHostnames bool
	// GatewayResolveInterval is how often the gateways' host names are
	// resolved again. Default: 30s, Istio's shortest gateway TTL.
	GatewayResolveInterval time.Duration
	// Logger receives the view's log records. Default: discard.
	Logger *slog.Logger
}

// ServiceSetting is one entry of the mesh's serviceSettings.
type ServiceSetting struct {
	// Hosts are hostnames, or wildcards "*.suffix" ("*" matches every
	// host).
	Hosts []string
	// ClusterLocal makes the hosts' endpoints visible only to proxies of
	// the endpoints' own cluster.
	ClusterLocal bool
}

// ErrInvalidOptions is wrapped by the error New returns for options it
// cannot use.
var ErrInvalidOptions = errors.New("proxyview: invalid options")

// defaults returns o with every unset field at its default, or an error
// naming each field it cannot use.
func (o Options) defaults() (Options, error) {
	if o.DomainSuffix == "" {
		o.DomainSuffix = model.DefaultDomainSuffix
	}
	if o.DefaultServiceExportTo == nil {
		o.DefaultServiceExportTo = []string{"*"}
	}
	if o.DiscoveryAddress == "" {
		o.DiscoveryAddress = DefaultDiscoveryAddress
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.GatewayResolveInterval <= 0 {
		o.GatewayResolveInterval = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	for _, e := range o.DefaultServiceExportTo {
		if e == "" || strings.ContainsAny(e, " ,") {
			errs = append(errs, fmt.Errorf("DefaultServiceExportTo: %q is not \"*\", \".\", \"~\" or a namespace", e))
		}
	}
	if _, _, err := net.SplitHostPort(o.DiscoveryAddress); err != nil {
		errs = append(errs, fmt.Errorf("DiscoveryAddress %q: %w", o.DiscoveryAddress, err))
	}
	for i, s := range o.ServiceSettings {
		for _, h := range s.Hosts {
			if h == "" || strings.Contains(h[1:], "*") || (h[0] == '*' && h != "*" && !strings.HasPrefix(h, "*.")) {
				errs = append(errs, fmt.Errorf("ServiceSettings[%d]: host %q is not a hostname or a \"*.\" wildcard", i, h))
			}
		}
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return o, nil
}
