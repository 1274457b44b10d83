package address

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/meshreg/meshreg/model"
)

// ErrInvalidOptions is wrapped by New's error when an option cannot be
// used.
var ErrInvalidOptions = errors.New("address: invalid options")

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
	// Debounce is how long the index waits after a change for more
	// before it publishes; 0 publishes each batch of changes as soon as
	// it is applied.
	Debounce time.Duration
	// Logger receives the index's logs; nil discards them.
	Logger *slog.Logger
}

func (o Options) defaults() (Options, error) {
	if o.TrustDomain == "" {
		o.TrustDomain = "cluster.local"
	}
	if o.Debounce < 0 {
		return o, fmt.Errorf("%w: Debounce %v is negative", ErrInvalidOptions, o.Debounce)
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
