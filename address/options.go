package address

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/meshreg/meshreg/model"
)

// ErrInvalidOptions is wrapped by New's error when an option cannot be
// used.
var ErrInvalidOptions = errors.New("address: invalid options")

// DefaultDebounce is Options.Debounce's default: Istio's.
const DefaultDebounce = 100 * time.Millisecond

// Options configure an Index. The zero value is Istio's defaults.
type Options struct {
	// ConfigCluster is the cluster ServiceEntries belong to (istiod's
	// config cluster): the cluster of the workload a DYNAMIC_DNS entry's
	// host makes, which the registry holds no endpoint for.
	ConfigCluster model.ClusterID
	// TrustDomain is the mesh's trust domain, "cluster.local" when
	// empty. A workload names it only when it is not cluster.local, as
	// istiod sends it.
	TrustDomain string
	// ClusterNetwork returns the network of a cluster: the network a
	// Kubernetes Service's VIPs in that cluster are on (a cluster's
	// system namespace label topology.istio.io/network, which
	// kube.Controller.Network reports). Nil: every VIP is on the
	// default network, "".
	ClusterNetwork func(model.ClusterID) model.NetworkID
	// Metadata gives the namespaces and waypoints, which the registry
	// does not hold. Nil: no namespace labels and no waypoints.
	Metadata Metadata
	// Debounce is how long the index waits after the first change of a
	// batch for more before it applies them and publishes one
	// generation: by default (0) 100ms, Istio's PILOT_DEBOUNCE_AFTER;
	// negative for no wait (changes that arrive while a batch is applied
	// are still one batch).
	Debounce time.Duration
	// Logger receives the index's logs; nil discards them.
	Logger *slog.Logger
}

func (o Options) defaults() (Options, error) {
	if o.TrustDomain == "" {
		o.TrustDomain = "cluster.local"
	}
	if strings.ContainsAny(o.TrustDomain, "/ \t\n") {
		return o, fmt.Errorf("%w: TrustDomain %q is not a trust domain", ErrInvalidOptions, o.TrustDomain)
	}
	if o.Debounce == 0 {
		o.Debounce = DefaultDebounce
	}
	if o.ClusterNetwork == nil {
		o.ClusterNetwork = func(model.ClusterID) model.NetworkID { return "" }
	}
	if o.Metadata == nil {
		o.Metadata = NewStaticMetadata()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
