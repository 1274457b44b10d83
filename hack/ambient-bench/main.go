// ambient-bench measures Istio's own ambient index (the krt-based index
// istiod builds with PILOT_ENABLE_AMBIENT=true:
// istio.io/istio/pilot/pkg/serviceregistry/ambient, ambient.New) over a
// large Kubernetes world held by Istio's fake client: its initial build, the
// heap it holds per workload, and the cost of a Pod readiness change and of
// a Service change until the index publishes them. It prints one JSON
// object on stdout.
//
//	ambient-bench -world FILE.yaml [-changes 200] [-split] [-v]
//
// See README.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/meshreg/meshreg/hack/ambient-bench/internal/ambientenv"

	"istio.io/istio/pilot/pkg/features"
	istiolog "istio.io/istio/pkg/log"
)

var verbose bool

func verbosef(format string, args ...any) {
	if verbose {
		fmt.Fprintf(os.Stderr, "ambient-bench: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ambient-bench:", err)
	os.Exit(1)
}

// heapAlloc is the heap in use after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1e3) / 1e3 }

// buildPhase is a part of the initial build (with -split).
type buildPhase struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	HeapBytes  int64   `json:"heapBytes"`
}

type result struct {
	File    string         `json:"file"`
	Objects int            `json:"objects"`
	ByKind  map[string]int `json:"objectsByKind"`

	Workloads int `json:"workloads"`
	Services  int `json:"services"`

	LoadSeconds    float64 `json:"loadSeconds"`
	LoadCPUSeconds float64 `json:"loadCpuSeconds"`

	InitialBuildSeconds    float64 `json:"initialBuildSeconds"`
	InitialBuildCPUSeconds float64 `json:"initialBuildCpuSeconds"`
	InitialBuildGCSeconds  float64 `json:"initialBuildGcCpuSeconds"`
	// From the start of the build until the process is idle: krt goes on
	// recomputing after HasSynced (see settleCPU). The heap after is
	// measured then.
	SettledSeconds    float64 `json:"initialBuildSettledSeconds"`
	SettledCPUSeconds float64 `json:"initialBuildSettledCpuSeconds"`
	// With -split: the informers (multicluster controller) synced first,
	// then the ambient index built over them.
	Informers *buildPhase `json:"informers,omitempty"`
	Index     *buildPhase `json:"index,omitempty"`

	HeapBeforeBytes      uint64  `json:"heapBeforeBytes"`
	HeapAfterBytes       uint64  `json:"heapAfterBytes"`
	HeapPerWorkloadBytes float64 `json:"heapPerWorkloadBytes"`

	PodChange     changeResult `json:"podChange"`
	ServiceChange changeResult `json:"serviceChange"`

	GoVersion  string `json:"goVersion"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func main() {
	worldFile := flag.String("world", "", "the world: multi-document YAML of Namespaces, Nodes, Services, Pods, EndpointSlices")
	changes := flag.Int("changes", 200, "pod readiness changes to measure (service changes: a tenth of it, at least 1)")
	split := flag.Bool("split", false, "sync the informers (multicluster controller) before building the ambient index, "+
		"and report both parts; by default both start together, as in istiod")
	syncTimeout := flag.Duration("sync-timeout", 30*time.Minute, "longest wait for the initial build")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the change phases to this file")
	flag.BoolVar(&verbose, "v", false, "progress and Istio's logs on stderr")
	flag.Parse()
	if *worldFile == "" || flag.NArg() != 0 || *changes < 1 {
		flag.Usage()
		os.Exit(2)
	}

	lo := istiolog.DefaultOptions()
	lo.OutputPaths = []string{"stderr"}
	lo.ErrorOutputPaths = []string{"stderr"}
	if !verbose {
		lo.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	}
	if err := istiolog.Configure(lo); err != nil {
		fatal(err)
	}
	if !features.EnableAmbient || !features.EnableAmbientWaypoints {
		fatal(fmt.Errorf("Istio's ambient mode is off although %s=true was set before Istio's init (package init order?)",
			ambientenv.Variable))
	}

	res := result{File: *worldFile, GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}

	// 1. Load: the world into the fake API server, before anything watches it.
	raw := newFakeClient()
	if err := createDefaultGatewayClasses(raw); err != nil {
		fatal(err)
	}
	verbosef("loading %s", *worldFile)
	t0, c0 := time.Now(), cpuTime()
	w, err := load(raw, *worldFile)
	if err != nil {
		fatal(err)
	}
	res.LoadSeconds, res.LoadCPUSeconds = seconds(time.Since(t0)), seconds(cpuTime()-c0)
	res.Objects, res.ByKind = w.objects, w.byKind
	verbosef("loaded %d objects in %.1fs %v", w.objects, res.LoadSeconds, w.byKind)
	if len(w.pods) == 0 || len(w.services) == 0 {
		fatal(fmt.Errorf("%s: the world needs Pods and Services", *worldFile))
	}

	// The fake client's own cost of the writes the change phases make,
	// measured now, with nothing watching.
	svcChanges := max(*changes/10, 1)
	// A collection first, so that the loaded heap's is not charged to the writes.
	runtime.GC()
	podWC, err := podWriteCost(raw, w, *changes)
	if err != nil {
		fatal(err)
	}
	svcWC, err := serviceWriteCost(raw, w, svcChanges)
	if err != nil {
		fatal(err)
	}
	verbosef("write cost: pod %v, service %v", podWC, svcWC)

	// 2./3. Initial build, and the heap it holds.
	res.HeapBeforeBytes = heapAlloc()
	verbosef("heap before: %d MB; starting the index", res.HeapBeforeBytes>>20)
	var s *istiod
	t0, c0 = time.Now(), cpuTime()
	g0 := gcCPU()
	ready := func() bool {
		if !s.synced() {
			return false
		}
		n, _ := s.counts()
		return n >= w.workloadPods
	}
	if *split {
		s = newIstiod(raw)
		if err := s.runInformers(); err != nil {
			fatal(err)
		}
		if err := waitFor("the informers to sync", *syncTimeout, 10*time.Millisecond, s.synced); err != nil {
			fatal(err)
		}
		d, c := time.Since(t0), cpuTime()-c0
		h := heapAlloc()
		res.Informers = &buildPhase{Seconds: seconds(d), CPUSeconds: seconds(c), HeapBytes: int64(h) - int64(res.HeapBeforeBytes)}
		verbosef("informers synced in %.1fs; building the index", d.Seconds())
		t1, c1 := time.Now(), cpuTime()
		s.buildIndex()
		s.runIndex()
		if err := waitFor("the ambient index to hold every pod", *syncTimeout, 20*time.Millisecond, ready); err != nil {
			fatal(err)
		}
		d2, c2 := time.Since(t1), cpuTime()-c1
		res.Index = &buildPhase{Seconds: seconds(d2), CPUSeconds: seconds(c2)}
		res.InitialBuildSeconds, res.InitialBuildCPUSeconds = seconds(d+d2), seconds(c+c2)
		res.InitialBuildGCSeconds = seconds(gcCPU() - g0)
		if err := settleCPU(*syncTimeout); err != nil {
			fatal(err)
		}
		res.SettledSeconds = seconds(d + time.Since(t1) - 500*time.Millisecond)
		res.SettledCPUSeconds = seconds(c + cpuTime() - c1)
		res.HeapAfterBytes = heapAlloc()
		res.Index.HeapBytes = int64(res.HeapAfterBytes) - int64(h)
	} else {
		// istiod's order: controller and index built, then everything started.
		s = newIstiod(raw)
		s.buildIndex()
		if err := s.mcc.Run(s.stop); err != nil {
			fatal(err)
		}
		s.runIndex()
		if err := waitFor("the ambient index to hold every pod", *syncTimeout, 20*time.Millisecond, ready); err != nil {
			fatal(err)
		}
		res.InitialBuildSeconds, res.InitialBuildCPUSeconds = seconds(time.Since(t0)), seconds(cpuTime()-c0)
		res.InitialBuildGCSeconds = seconds(gcCPU() - g0)
		if err := settleCPU(*syncTimeout); err != nil {
			fatal(err)
		}
		// The two idle windows that ended the wait are not part of it.
		res.SettledSeconds = seconds(time.Since(t0) - 500*time.Millisecond)
		res.SettledCPUSeconds = seconds(cpuTime() - c0)
		res.HeapAfterBytes = heapAlloc()
	}
	res.Workloads, res.Services = s.counts()
	res.HeapPerWorkloadBytes = math.Round(float64(int64(res.HeapAfterBytes)-int64(res.HeapBeforeBytes)) / float64(res.Workloads))
	verbosef("index built in %.1fs (idle after %.1fs): %d workloads, %d services, heap after %d MB",
		res.InitialBuildSeconds, res.SettledSeconds, res.Workloads, res.Services, res.HeapAfterBytes>>20)

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	// 4. Pod readiness changes.
	if res.PodChange, err = s.podChanges(raw, w, *changes, podWC); err != nil {
		fatal(err)
	}
	verbosef("pod changes: %+v", res.PodChange)
	// 5. Service changes.
	if res.ServiceChange, err = s.serviceChanges(raw, w, svcChanges, svcWC); err != nil {
		fatal(err)
	}
	verbosef("service changes: %+v", res.ServiceChange)

	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fatal(err)
	}
	fmt.Println(string(out))
	// Do not wait for the informers to shut down; the process exits (after
	// the deferred profile is written).
}
