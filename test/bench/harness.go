package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// Options configure Run. The zero value is valid; each field documents
// its default.
type Options struct {
	// Runs is the number of runs; medians are taken over them. Default 3.
	Runs int
	// Changes is the length of the churn stream. Default 2000.
	Changes int
	// Systems lists the systems to measure. Default Systems.
	Systems []string
	// ServiceEntries adds the scenario's ServiceEntries (a serviceentry
	// controller over a static source) to the aggregate system. Default
	// false: the aggregate holds the kube controller alone, so that it
	// sees the floor's data.
	ServiceEntries bool
	// SkipQueries skips the query benchmarks. Default false.
	SkipQueries bool
	// MemProfile, when set, names a file to write the heap profile to
	// after MemProfileSystem's sync in the first run.
	MemProfile string
	// MemProfileSystem is the system profiled, by MemProfile and the
	// CPU profiles below. Default Aggregate.
	MemProfileSystem string
	// SyncCPUProfile, ChurnCPUProfile and DeliveredCPUProfile, when set,
	// name files to write CPU profiles of MemProfileSystem's initial
	// sync, written churn stream and delivered churn stream
	// (runDelivered) to, in the first run.
	SyncCPUProfile, ChurnCPUProfile, DeliveredCPUProfile string
	// FirstRun is the index of the first run: runs are numbered from it,
	// the profiles are taken in run 0, and the systems' order rotates
	// with the index. A command that measures each run in a process of
	// its own sets it. Default 0.
	FirstRun int
	// Log receives progress lines. Default: discard.
	Log io.Writer
}

func (o Options) defaults() Options {
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Changes <= 0 {
		o.Changes = 2000
	}
	if len(o.Systems) == 0 {
		o.Systems = Systems
	}
	if o.MemProfileSystem == "" {
		o.MemProfileSystem = Aggregate
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// SystemResult is one system's figures in one run, or their medians.
type SystemResult struct {
	System string `json:"system"`
	// SyncSeconds is the time from start until synced (see system);
	// SyncCPUSeconds the process CPU time it took.
	SyncSeconds    float64 `json:"sync_seconds"`
	SyncCPUSeconds float64 `json:"sync_cpu_seconds"`
	// SyncSystemCPUSeconds is the part of SyncCPUSeconds spent in the
	// kernel, and SyncMinorFaults the minor page faults of the process
	// during the sync: the cost of memory touched for the first time,
	// which a sync that allocates a state pays in full. Older reports
	// lack both (omitempty), and WriteMarkdown leaves their rows out.
	SyncSystemCPUSeconds float64 `json:"sync_system_cpu_seconds,omitempty"`
	SyncMinorFaults      int64   `json:"sync_minor_faults,omitempty"`
	// SyncGCCycles is the number of garbage collection cycles that
	// ended during the sync; SyncGCPauseSeconds their stop-the-world
	// pauses.
	SyncGCCycles       int64   `json:"sync_gc_cycles"`
	SyncGCPauseSeconds float64 `json:"sync_gc_pause_seconds"`
	// HeapAlloc and HeapInuse are the live heap after sync and GC, less
	// the heap before the system started (the preloaded clientset).
	HeapAlloc int64 `json:"heap_alloc_bytes"`
	HeapInuse int64 `json:"heap_inuse_bytes"`
	// Events counts the endpoints events the registry's subscriber
	// received during sync (registries only).
	Events  int64         `json:"sync_endpoint_events,omitempty"`
	Churn   ChurnResult   `json:"churn"`
	Queries []QueryResult `json:"queries,omitempty"`
}

// RunResult is one run over a fresh clientset.
type RunResult struct {
	Run int `json:"run"`
	// WriteCPUPerChange is the churn stream's CPU per change with no
	// system running: the cost of the writes alone (ns); the median over
	// the run's systems' clientsets (see ChurnResult.WriteCPUPerChange).
	WriteCPUPerChange int64 `json:"write_cpu_per_change_ns"`
	// WriteSteadyCPUPerChange is the same as a median of parts (see
	// ChurnResult.SteadyCPUPerChange).
	WriteSteadyCPUPerChange int64 `json:"write_steady_cpu_per_change_ns"`
	// WriteAllocsPerChange is the same for heap allocations.
	WriteAllocsPerChange int64          `json:"write_allocs_per_change"`
	Systems              []SystemResult `json:"systems"`
}

// PresetResult is every run of one scenario, and the medians.
type PresetResult struct {
	Config  Config         `json:"config"`
	Counts  Counts         `json:"counts"`
	Runs    []RunResult    `json:"runs"`
	Medians []SystemResult `json:"medians"`
}

// Run measures the systems over the scenario c describes.
//
// Each system, in each run, works over a clientset of its own, preloaded
// from a freshly generated scenario whose objects are then dropped: the
// tracker keeps copies of its own, and what the measurement reads
// afterwards (service names, the churn stream, ServiceEntries) is kept
// aside. The generator's copy of the cluster belongs to neither system,
// and in a real control plane the API server's objects are not in the
// process at all; kept alive, it would only add to every garbage
// collection cycle. A clientset is not shared between systems because
// the fake tracker never forgets a watcher: after a system stops, every
// later write still deep-copies the object for each of its watchers, a
// cost that would fall on whichever system came next.
func Run(ctx context.Context, c Config, opts Options) (*PresetResult, error) {
	opts = opts.defaults()
	sc := Generate(c)
	cfg, counts := sc.Config, sc.Counts()
	stream := churnStream(sc, opts.Changes)
	light := sc.light()
	preload := func(run int, system string) *fake.Clientset {
		// The previous system's clientset is garbage by now: collect it
		// first, so that this one takes its place in the heap instead of
		// growing the heap beside it.
		liveHeap()
		if sc == nil {
			sc = Generate(c)
		}
		t0 := time.Now()
		objs := sc.KubeObjects()
		client := fake.NewSimpleClientset(objs...)
		fmt.Fprintf(opts.Log, "%s run %d: %s: preloaded %d objects in %v\n", c.Name, run, system, len(objs), time.Since(t0).Round(time.Millisecond))
		sc = nil
		return client
	}
	var runs []RunResult
	for run := range opts.Runs {
		rr, err := runOnce(ctx, preload, light, stream, opts.FirstRun+run, opts)
		if err != nil {
			return nil, err
		}
		runs = append(runs, *rr)
	}
	return Summarize(cfg, counts, runs, opts.Systems), nil
}

// runOnce measures every system once, each over a clientset preload
// returns, preloaded with the scenario that sc is the light form of (see
// Scenario.light).
func runOnce(ctx context.Context, preload func(run int, system string) *fake.Clientset, sc *Scenario, stream []change, run int, opts Options) (*RunResult, error) {
	rr := &RunResult{Run: run}

	for _, name := range RunOrder(opts.Systems, run) {
		client := preload(run, name)

		// The writes alone on this clientset, so that the system's
		// share can be told apart. (Flips and label changes leave the
		// scenario's size unchanged.) The first pass warms up after the
		// preload; the second is measured.
		w := &writer{client: client}
		var wr ChurnResult
		for range 2 {
			liveHeap()
			var err error
			if wr, err = runChurn(ctx, w, nil, false, stream); err != nil {
				return nil, err
			}
		}

		r, err := measureSystem(ctx, client, w, sc, stream, name, run, opts)
		if err != nil {
			return nil, fmt.Errorf("%s run %d: %s: %w", sc.Config.Name, run, name, err)
		}
		r.Churn.WriteCPUPerChange = wr.CPUPerChange
		r.Churn.WriteSteadyCPUPerChange = wr.SteadyCPUPerChange
		r.Churn.WriteAllocsPerChange = wr.AllocsPerChange
		r.Churn.HandlerCPUPerChange = r.Churn.CPUPerChange - wr.CPUPerChange
		r.Churn.HandlerSteadyCPUPerChange = r.Churn.SteadyCPUPerChange - wr.SteadyCPUPerChange
		r.Churn.HandlerAllocsPerChange = r.Churn.AllocsPerChange - wr.AllocsPerChange
		fmt.Fprintf(opts.Log, "  %-9s sync %.3fs (cpu %.3fs, system %.3fs, %d minor faults, %d GC)  heap %.1f MiB  churn p50 %v p99 %v cpu/change %v (writes alone %v) allocs/change %d (%d) %d GC  %.0f ev/s  delivered: cpu/change %v (median part %v) allocs/change %d p50 %v\n",
			name, r.SyncSeconds, r.SyncCPUSeconds, r.SyncSystemCPUSeconds, r.SyncMinorFaults, r.SyncGCCycles, float64(r.HeapAlloc)/(1<<20),
			time.Duration(r.Churn.P50), time.Duration(r.Churn.P99), time.Duration(r.Churn.CPUPerChange), time.Duration(wr.CPUPerChange),
			r.Churn.AllocsPerChange, wr.AllocsPerChange, r.Churn.GCCycles, r.Churn.EventsPerSecond,
			time.Duration(r.Churn.DeliveredCPUPerChange), time.Duration(r.Churn.DeliveredSteadyCPUPerChange), r.Churn.DeliveredAllocsPerChange, time.Duration(r.Churn.DeliveredP50))
		rr.Systems = append(rr.Systems, r)
		runtime.KeepAlive(client)
	}
	return rr, nil
}

// RunOrder returns the order in which run measures systems: rotated by
// the run's index, so that none always goes first.
func RunOrder(systems []string, run int) []string {
	n := len(systems)
	out := make([]string, n)
	for i := range n {
		out[i] = systems[(i+run)%n]
	}
	return out
}

func measureSystem(ctx context.Context, client *fake.Clientset, w *writer, sc *Scenario, stream []change, name string, run int, opts Options) (SystemResult, error) {
	r := SystemResult{System: name}
	tap := TapWatches(client)
	sys, err := newSystem(name, client, sc, opts.ServiceEntries)
	if err != nil {
		return r, err
	}
	profiled := run == 0 && name == opts.MemProfileSystem
	base := liveHeap()
	stopProfile := func() {}
	if opts.SyncCPUProfile != "" && profiled {
		if stopProfile, err = startCPUProfile(opts.SyncCPUProfile); err != nil {
			return r, err
		}
	}
	var gc0 runtime.MemStats
	runtime.ReadMemStats(&gc0)
	u0, t0 := processUsage(), time.Now()
	if err := sys.start(ctx); err != nil {
		stopProfile()
		return r, err
	}
	defer func() {
		if sys != nil {
			sys.stop()
		}
	}()
	for !sys.synced() {
		select {
		case <-ctx.Done():
			stopProfile()
			return r, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	r.SyncSeconds = time.Since(t0).Seconds()
	u1 := processUsage()
	r.SyncCPUSeconds = (u1.user + u1.system - u0.user - u0.system).Seconds()
	r.SyncSystemCPUSeconds = (u1.system - u0.system).Seconds()
	r.SyncMinorFaults = u1.minorFaults - u0.minorFaults
	var gc1 runtime.MemStats
	runtime.ReadMemStats(&gc1)
	r.SyncGCCycles = int64(gc1.NumGC - gc0.NumGC)
	r.SyncGCPauseSeconds = time.Duration(gc1.PauseTotalNs - gc0.PauseTotalNs).Seconds()
	stopProfile()
	after := liveHeap()
	r.HeapAlloc, r.HeapInuse = after.alloc-base.alloc, after.inuse-base.inuse
	if rs, ok := sys.(*registrySystem); ok {
		r.Events = rs.events.Load()
	}
	if opts.MemProfile != "" && profiled {
		if err := writeHeapProfile(opts.MemProfile); err != nil {
			return r, err
		}
	}
	liveHeap()
	stopProfile = func() {}
	if opts.ChurnCPUProfile != "" && profiled {
		if stopProfile, err = startCPUProfile(opts.ChurnCPUProfile); err != nil {
			return r, err
		}
	}
	r.Churn, err = runChurn(ctx, w, sys, floorKeys(name), stream)
	stopProfile()
	if err != nil {
		return r, err
	}
	// The same changes delivered to the watches, built first; the
	// written stream's garbage is collected before.
	ds, err := w.deliveries(ctx, stream)
	if err != nil {
		return r, fmt.Errorf("churn deliveries: %w", err)
	}
	runtime.GC()
	stopProfile = func() {}
	if opts.DeliveredCPUProfile != "" && profiled {
		if stopProfile, err = startCPUProfile(opts.DeliveredCPUProfile); err != nil {
			return r, err
		}
	}
	err = runDelivered(tap, sys, floorKeys(name), stream, ds, &r.Churn)
	stopProfile()
	if err != nil {
		return r, err
	}
	if d := sys.discovery(); d != nil && !opts.SkipQueries {
		r.Queries = runQueries(d, sc)
	}
	sys.stop()
	sys = nil
	return r, nil
}
