package address

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/meshreg/meshreg/internal/derived"
	"github.com/meshreg/meshreg/model"
)

// ErrInvalidOptions is wrapped by New's error when an option cannot be
// used.
var ErrInvalidOptions = errors.New("address: invalid options")

// DefaultDebounce is Options.Debounce's default: Istio's.
const DefaultDebounce = derived.DefaultQuiet

// Options configure an Index. The zero value is Istio's defaults.
type Options struct {
	// ConfigCluster is istiod's config cluster: the cluster ServiceEntries
	// belong to, whose namespaces and Gateways decide their waypoints and
	// whose network their VIPs are on. Empty: the first cluster by ID of
	// those the source publishes metadata of, which is right for a source
	// of one cluster; set it for a source of several.
	ConfigCluster model.ClusterID
	// TrustDomain is the mesh's trust domain, "cluster.local" when
	// empty. A workload names it only when it is not cluster.local, as
	// istiod sends it.
	TrustDomain string
	// MultiNetwork is Istio's AMBIENT_ENABLE_MULTI_NETWORK (default
	// false): off, the index holds the config cluster's workloads and
	// services alone; on, every cluster's, as Istio's multicluster
	// ambient mode sends them (see ServiceScope).
	MultiNetwork bool
	// ServiceScopes are the mesh config's serviceScopeConfigs (package
	// meshconfig reads them): which Kubernetes Services are global. Read
	// only with MultiNetwork; none (the default) makes every Service
	// local to its cluster.
	ServiceScopes []model.ServiceScope
	// Debounce is how long the index waits for no change to come before
	// it applies a batch of changes and publishes one generation: by
	// default (0) 100ms, Istio's PILOT_DEBOUNCE_AFTER; negative for no
	// wait (changes that arrive while a batch is applied are still one
	// batch).
	Debounce time.Duration
	// DebounceMax is how long after its first change a batch is applied
	// at the latest, however changes keep coming: by default (0) 10s,
	// Istio's PILOT_DEBOUNCE_MAX.
	DebounceMax time.Duration
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
	if o.DebounceMax <= 0 {
		o.DebounceMax = derived.DefaultMax
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
