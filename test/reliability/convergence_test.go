package reliability_test

import (
	"flag"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshreg/meshreg/test/reliability"
)

var (
	convergenceSeed = flag.Uint64("convergence.seed", 0, "replay only the sequence of this seed (printed by a failure)")
	convergenceLong = flag.Duration("convergence.long", 0, "run random sequences for this long instead of the fixed batch (also MESHREG_CONVERGENCE_DURATION)")
	convergenceN    = flag.Int("convergence.n", 500, "sequences in the fixed-seed batch")
)

// baseSeed is the first seed of the fixed batch: seeds baseSeed,
// baseSeed+1, ... run in every `make test`.
const baseSeed = 20240601

// TestConvergence is the convergence property: whatever history of
// changes an aggregate lived through, once it is quiet its dump equals the
// dump of a fresh aggregate built from the final objects alone. The
// histories hold ServiceExports and ServiceImports, and two thirds of
// them run with Multi-Cluster Services on (Generator.MCS).
//
// The fixed batch runs -convergence.n sequences (500) of seeds baseSeed
// onwards. -convergence.long=DURATION (or MESHREG_CONVERGENCE_DURATION)
// runs sequences of time-derived seeds until the duration is over;
// -convergence.seed=N replays one sequence. Each failure prints its seed
// and the whole sequence.
func TestConvergence(t *testing.T) {
	t.Parallel()
	long := *convergenceLong
	if env := os.Getenv("MESHREG_CONVERGENCE_DURATION"); env != "" && long == 0 {
		d, err := time.ParseDuration(env)
		if err != nil {
			t.Fatalf("MESHREG_CONVERGENCE_DURATION: %v", err)
		}
		long = d
	}
	var seeds func(yield func(uint64) bool)
	switch {
	case *convergenceSeed != 0:
		seeds = func(yield func(uint64) bool) { yield(*convergenceSeed) }
	case long > 0:
		start := uint64(time.Now().UnixNano())
		deadline := time.Now().Add(long)
		t.Logf("long mode for %s from seed %d", long, start)
		seeds = func(yield func(uint64) bool) {
			for s := start; time.Now().Before(deadline); s++ {
				if !yield(s) {
					return
				}
			}
		}
	default:
		if testing.Short() {
			*convergenceN = min(*convergenceN, 50)
		}
		seeds = func(yield func(uint64) bool) {
			for i := range uint64(*convergenceN) {
				if !yield(baseSeed + i) {
					return
				}
			}
		}
	}

	gen := reliability.Generator{MCS: true}
	checker := reliability.Checker{}
	var ran, diverged, late, steps atomic.Int64
	work := make(chan uint64)
	var wg sync.WaitGroup
	// Most of a check is waiting for the registry to be quiet, so many
	// run at once even on few cores.
	workers := 8 * runtime.GOMAXPROCS(0)
	ctx := t.Context()
	for range workers {
		wg.Go(func() {
			for seed := range work {
				seq := gen.Sequence(seed)
				res, err := checker.Check(ctx, seq)
				ran.Add(1)
				steps.Add(int64(len(seq.Steps)))
				if err != nil {
					t.Errorf("%v\n%s", err, seq.Describe())
					continue
				}
				if res.Late {
					late.Add(1)
					t.Logf("seed %d matched %s after settling", seed, res.LateBy.Round(time.Millisecond))
				}
				if !res.Converged() {
					diverged.Add(1)
					t.Errorf("seed %d diverged (replay: go test -race ./test/reliability/ -run TestConvergence -convergence.seed=%d)\n%s\ndump diff (-fresh +lived):\n%s",
						seed, seed, seq.Describe(), res.Diff())
				}
			}
		})
	}
	for s := range seeds {
		if t.Failed() && diverged.Load() >= 3 {
			break
		}
		work <- s
	}
	close(work)
	wg.Wait()
	t.Logf("convergence: %d sequences (%d steps) run, %d diverged; %d matched only within the grace period", ran.Load(), steps.Load(), diverged.Load(), late.Load())
}

// TestConvergenceShared is the convergence property with the live
// aggregate's kube controllers fed from shared informers
// (kube.Options.Informers) and the fresh one's from their own: both modes
// must give the same dump, and once the live aggregate has settled every
// object in the shared caches must still equal the API's (nothing meshreg
// read from them was modified). 100 sequences of the fixed batch's seeds
// (-convergence.n caps them too).
func TestConvergenceShared(t *testing.T) {
	t.Parallel()
	n := min(*convergenceN, 100)
	if testing.Short() {
		n = min(n, 20)
	}
	gen := reliability.Generator{MCS: true}
	checker := reliability.Checker{Shared: true}
	work := make(chan uint64)
	var wg sync.WaitGroup
	var changed atomic.Int64
	for range 8 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for seed := range work {
				seq := gen.Sequence(seed)
				res, err := checker.Check(t.Context(), seq)
				if err != nil {
					t.Errorf("%v\n%s", err, seq.Describe())
					continue
				}
				if !res.Converged() {
					t.Errorf("seed %d: shared informers diverged from the controllers' own (replay: -run TestConvergenceShared -convergence.n=%d)\n%s\ndump diff (-own, fresh +shared, lived):\n%s",
						seed, seed-baseSeed+1, seq.Describe(), res.Diff())
				}
				if len(res.CacheChanges) > 0 {
					changed.Add(1)
					t.Errorf("seed %d: objects of the shared caches differ from the API's: %v", seed, res.CacheChanges)
				}
			}
		})
	}
	for i := range uint64(n) {
		work <- baseSeed + i
	}
	close(work)
	wg.Wait()
	t.Logf("shared informers: %d sequences, %d left a shared cache changed", n, changed.Load())
}
