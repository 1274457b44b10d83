package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/sources"
)

// SelectorLabel is the namespace label the harness's namespace selector
// matches (value "on"): a namespace without it is outside every kube
// controller's view.
const SelectorLabel = "meshreg-reliability"

// Harness is an aggregate built by sources.Build over manifest clusters,
// running, into which worlds are applied through ManifestCluster.Apply,
// exactly as registry-dump applies changed manifests.
type Harness struct {
	Built *sources.Built
	// Index is the address index over the aggregate, running with it:
	// the dumps hold its state too, so that the convergence checks hold
	// it to decision 6 as well.
	Index    *address.Index
	clusters []model.ClusterID
	cancel   context.CancelFunc
	done     chan error
}

// Config returns the sources configuration of the harness: one manifest
// cluster per ID, each starting from an empty manifest, and a namespace
// selector on SelectorLabel.
func Config(clusters []model.ClusterID) sources.Config {
	cfg := sources.Config{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{SelectorLabel: "on"}},
	}
	empty := fstest.MapFS{"empty.yaml": &fstest.MapFile{}}
	for _, c := range clusters {
		cfg.Clusters = append(cfg.Clusters, sources.Cluster{ID: c, Manifests: "empty.yaml", FS: empty})
	}
	return cfg
}

// Start builds the aggregate of w's clusters with the namespace selector
// of Config, applies w before it runs, and runs it until Stop.
func Start(w World) (*Harness, error) {
	return StartConfig(Config(w.Clusters), w)
}

// StartConfig is Start with a configuration of the caller's; cfg's
// clusters must be w's.
func StartConfig(cfg sources.Config, w World) (*Harness, error) {
	built, err := sources.Build(cfg)
	if err != nil {
		return nil, err
	}
	idx, err := address.New(built.Aggregate, address.Options{Debounce: -1})
	if err != nil {
		return nil, err
	}
	h := &Harness{Built: built, Index: idx, clusters: slices.Clone(w.Clusters), done: make(chan error, 2)}
	if err := h.ApplyAll(w); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- built.Aggregate.Run(ctx) }()
	go func() { h.done <- idx.Run(ctx) }()
	return h, nil
}

// Apply makes cluster c hold w's objects of c.
func (h *Harness) Apply(w World, c model.ClusterID) error {
	mc := h.Built.Manifests[c]
	if mc == nil {
		return fmt.Errorf("no manifest cluster %s", c)
	}
	objs, err := w.Decode(c)
	if err != nil {
		return err
	}
	return mc.Apply(objs)
}

// ApplyAll applies every cluster of w, in order.
func (h *Harness) ApplyAll(w World) error {
	for _, c := range w.Clusters {
		if err := h.Apply(w, c); err != nil {
			return err
		}
	}
	return nil
}

// ApplyConcurrently applies the clusters cs of w each from a goroutine of
// its own.
func (h *Harness) ApplyConcurrently(w World, cs []model.ClusterID) error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { errs[i] = h.Apply(w, c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Stop stops the aggregate and the index and waits for every goroutine
// they started.
func (h *Harness) Stop() error {
	h.cancel()
	return errors.Join(<-h.done, <-h.done)
}

// MembersSettled reports whether every member registry that can lag
// behind its inputs (registry.Settler) reports Settled, and the index.
func (h *Harness) MembersSettled() bool {
	if !h.Index.Settled() {
		return false
	}
	for _, r := range h.Built.Aggregate.Registries() {
		if s, ok := r.(registry.Settler); ok && !s.Settled() {
			return false
		}
	}
	return true
}

// Dump returns the dump of the harness's registry (registry.WriteJSON of
// Built.Discovery).
func (h *Harness) Dump() ([]byte, error) { return Dump(h.Built.Discovery) }

// State returns the registry's dump followed by its address index
// (address.WriteJSON): everything the harness computes.
func (h *Harness) State() ([]byte, error) {
	d, err := Dump(h.Built.Discovery)
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(d)
	if err := address.WriteJSON(b, h.Index.Snapshot()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Dump returns registry.WriteJSON of d.
func Dump(d registry.Discovery) ([]byte, error) {
	var b bytes.Buffer
	if err := registry.WriteJSON(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ErrNotSettled is wrapped by Settle's error when the deadline passes.
var ErrNotSettled = errors.New("registry did not settle")

// Settle waits until the aggregate and its address index have synced
// and are quiet, and returns the registry's dump. Quiet means: two
// consecutive states (State) interval apart are identical, and every
// member registry and the index reported Settled before each.
// Informer deliveries are invisible to Settled, hence the polling: this
// is the one place the reliability tests wait on time rather than on a
// signal, and only to conclude that nothing more is coming. Settle gives
// up when ctx is done.
func (h *Harness) Settle(ctx context.Context, interval time.Duration) ([]byte, error) {
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var prev []byte
	for {
		if h.Built.Aggregate.HasSynced() && h.Index.HasSynced() && h.MembersSettled() {
			cur, err := h.State()
			if err != nil {
				return nil, err
			}
			if prev != nil && bytes.Equal(prev, cur) {
				return h.Dump()
			}
			prev = cur
		} else {
			prev = nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrNotSettled, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// WaitSynced waits until the aggregate has synced, or ctx is done.
func (h *Harness) WaitSynced(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !h.Built.Aggregate.HasSynced() || !h.Index.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("aggregate did not sync: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
	return nil
}

// Drain waits until every member reports Settled, at most max. It does
// not wait for informers: it is a pause between steps, not a check.
func (h *Harness) Drain(max time.Duration) {
	deadline := time.Now().Add(max)
	for !h.MembersSettled() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// cutKey splits a World key "Kind/namespace/name".
func cutKey(key string) (kind, name, namespace string) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return key, "", ""
	}
	return parts[0], parts[2], parts[1]
}
