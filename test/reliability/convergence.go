package reliability

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/test/sources"
)

// Checker runs sequences against a live aggregate and compares the result
// with an aggregate built from the final objects alone (ARCHITECTURE.md
// decision 6: order never matters).
type Checker struct {
	// Interval is the settle polling interval. Default 50ms.
	Interval time.Duration
	// Timeout bounds each settle. Default 30s.
	Timeout time.Duration
	// Grace is how long the live aggregate may still take to reach the
	// fresh one's dump after both settled. Settling cannot see events
	// still inside an informer, and on a loaded machine an informer can
	// sit on one longer than a settle interval; a real divergence
	// persists. Default 5s.
	Grace time.Duration
	// Shared runs the live aggregate's kube controllers over shared
	// informers (sources.Config.SharedInformers), the fresh one's over
	// their own: the two modes must agree, and the live one must leave
	// the shared caches as the API has them (Result.CacheChanges).
	Shared bool
}

// Result is the outcome of one sequence.
type Result struct {
	Seed uint64
	// Got is the state (Harness.State: the dump and the address index)
	// of the aggregate that lived through the sequence; Want that of a
	// fresh aggregate over the final objects.
	Got, Want []byte
	// Late is set when the live aggregate matched only after the
	// first settle, within Checker.Grace; LateBy says how long after.
	Late   bool
	LateBy time.Duration
	// CacheChanges, with Checker.Shared, lists the objects of the shared
	// informers' caches that no longer equal the API's once the live
	// aggregate has settled (sources.ManifestCluster.SharedCacheChanges):
	// empty unless a registry modified an object it read.
	CacheChanges []string
}

// Converged reports whether the two dumps are byte-identical.
func (r Result) Converged() bool { return bytes.Equal(r.Got, r.Want) }

// Diff returns a readable difference of the dumps (-want +got).
func (r Result) Diff() string { return cmp.Diff(string(r.Want), string(r.Got)) }

func (c Checker) defaults() Checker {
	if c.Interval <= 0 {
		c.Interval = 50 * time.Millisecond
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 5 * time.Second
	}
	return c
}

// Check runs seq: it starts an aggregate over seq.Initial, applies every
// step (pausing or not as the step says), settles, and dumps; then it
// starts a fresh aggregate over the final world, settles and dumps. An
// error means the harness itself failed (a build error, or a registry
// that never settled), not a divergence.
func (c Checker) Check(ctx context.Context, seq Sequence) (res Result, err error) {
	c = c.defaults()
	res = Result{Seed: seq.Seed}
	h, err := start(seq.Initial, seq.MCS, c.Shared)
	if err != nil {
		return res, fmt.Errorf("seed %d: live aggregate: %w", seq.Seed, err)
	}
	defer func() {
		if serr := h.Stop(); err == nil && serr != nil {
			err = fmt.Errorf("seed %d: live aggregate: %w", seq.Seed, serr)
		}
	}()
	// The fake clientset drops the deletes made between an informer's
	// list and its watch (client-go's tracker replays only adds and
	// updates there), a limit of the fake that a real API server does
	// not have. Steps therefore start once the aggregate has synced:
	// every informer has listed, and the harness's polling of HasSynced
	// has given each reflector a few milliseconds to open its watch.
	if err := c.waitSynced(ctx, h); err != nil {
		return res, fmt.Errorf("seed %d: live aggregate: %w", seq.Seed, err)
	}
	got, err := c.run(ctx, h, seq)
	if err != nil {
		return res, fmt.Errorf("seed %d: live aggregate: %w", seq.Seed, err)
	}
	want, err := c.fresh(ctx, seq.Final(), seq.MCS)
	if err != nil {
		return res, fmt.Errorf("seed %d: fresh aggregate: %w", seq.Seed, err)
	}
	res.Got, res.Want = got, want
	if !res.Converged() {
		start := time.Now()
		res.Got, res.Late = c.awaitLate(ctx, h, want)
		res.LateBy = time.Since(start)
	}
	for _, mc := range h.Built.Manifests {
		res.CacheChanges = append(res.CacheChanges, mc.SharedCacheChanges()...)
	}
	return res, nil
}

func (c Checker) waitSynced(ctx context.Context, h *Harness) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	return h.WaitSynced(ctx)
}

// awaitLate polls the live aggregate's dump until it equals want or the
// grace period is over, and returns the last dump and whether it matched.
func (c Checker) awaitLate(ctx context.Context, h *Harness, want []byte) ([]byte, bool) {
	deadline := time.Now().Add(c.Grace)
	for {
		got, err := h.State()
		if err == nil && bytes.Equal(got, want) {
			return got, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return got, false
		}
		time.Sleep(c.Interval)
	}
}

func (c Checker) run(ctx context.Context, h *Harness, seq Sequence) (dump []byte, err error) {
	// Pauses jitter by a seeded amount so that the sequence replays as
	// closely as scheduling allows.
	r := rand.New(rand.NewPCG(seq.Seed, 1))
	for i, st := range seq.Steps {
		if st.Concurrent {
			err = h.ApplyConcurrently(st.World, st.Clusters)
		} else {
			for _, cl := range st.Clusters {
				if err = h.Apply(st.World, cl); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		switch st.Pause {
		case Yield:
			time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
		case Drain:
			h.Drain(200 * time.Millisecond)
		}
	}
	return c.settle(ctx, h)
}

// start is Start with the Multi-Cluster Services switches given, and
// with shared informers or without.
func start(w World, mcs sources.MCS, shared bool) (*Harness, error) {
	cfg := Config(w.Clusters)
	cfg.MCS = mcs
	cfg.SharedInformers = shared
	return StartConfig(cfg, w)
}

func (c Checker) fresh(ctx context.Context, w World, mcs sources.MCS) (dump []byte, err error) {
	h, err := start(w, mcs, false)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := h.Stop(); err == nil {
			err = serr
		}
	}()
	return c.settle(ctx, h)
}

func (c Checker) settle(ctx context.Context, h *Harness) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if _, err := h.Settle(ctx, c.Interval); err != nil {
		return nil, err
	}
	return h.State()
}

// Describe returns a readable account of a sequence: its seed, the
// initial world and each step's operations, and the final world's
// manifests.
func (s Sequence) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: initial world of %d objects, %d steps, MCS %+v\n", s.Seed, s.Initial.Len(), len(s.Steps), s.MCS)
	for i, st := range s.Steps {
		mode := "in order"
		if st.Concurrent {
			mode = "concurrently"
		}
		fmt.Fprintf(&b, "  step %d (apply %v %s, pause %d): %s\n", i, st.Clusters, mode, st.Pause, strings.Join(st.Ops, "; "))
	}
	final := s.Final()
	for _, cl := range final.Clusters {
		fmt.Fprintf(&b, "final manifests of cluster %s:\n%s", cl, final.YAML(cl))
	}
	return b.String()
}
