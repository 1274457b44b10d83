// fanout-istio is the Istio half of the fanout benchmark: it runs Istio's own
// xDS server (istiod's DiscoveryServer, as Istio's test harness
// istio.io/istio/pilot/test/xds.NewFakeDiscoveryServer builds it, with
// ambient mode on) over a fake Kubernetes API holding a world of Namespaces,
// Services, EndpointSlices and Pods, serves ADS on a real TCP listener, and
// offers the benchmark's control API.
//
//	fanout-istio -world FILE.yaml -xds-addr 127.0.0.1:15010 -control-addr 127.0.0.1:15014 [-v]
//
// Control API (HTTP on -control-addr):
//
//	GET  /ready  200 "ok" once the world is loaded, Istio's registries synced and a push committed; 503 before
//	POST /apply  YAML objects (same kinds as the world) to create or update; 200 "ok", or 400 with the reason
//	GET  /stats  {"pid", "heapBytes", "cpuSeconds", "goroutines"}; ?gc=1 collects garbage first
//	/debug/pprof/  Go's profiler (net/http/pprof)
//
// SIGINT or SIGTERM exits.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"istio.io/istio/pilot/pkg/features"
	istiolog "istio.io/istio/pkg/log"

	// Sets PILOT_ENABLE_AMBIENT=true before Istio's packages read it.
	"github.com/meshreg/meshreg/hack/fanout-istio/internal/ambientenv"
)

func main() {
	worldPath := flag.String("world", "", "multi-document YAML of Namespaces, Services, EndpointSlices and Pods (required)")
	xdsAddr := flag.String("xds-addr", "127.0.0.1:15010", "TCP address of the gRPC server serving ADS")
	controlAddr := flag.String("control-addr", "127.0.0.1:15014", "TCP address of the HTTP control API")
	verbose := flag.Bool("v", false, "show Istio's logs on stderr")
	flag.Parse()
	if flag.NArg() > 0 || *worldPath == "" {
		fmt.Fprintln(os.Stderr, "usage: fanout-istio -world FILE.yaml -xds-addr HOST:PORT -control-addr HOST:PORT [-v]")
		flag.PrintDefaults()
		os.Exit(2)
	}

	// Istio's logs: to stderr with -v, else none at all (every scope).
	lo := istiolog.DefaultOptions()
	lo.OutputPaths = []string{"stderr"}
	lo.ErrorOutputPaths = []string{"stderr"}
	if !*verbose {
		lo.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	}
	if err := istiolog.Configure(lo); err != nil {
		fatal(err)
	}

	// Feature flags: ambient comes from the environment at init (see package
	// ambientenv); the debounce limits are pinned to istiod's defaults
	// (PILOT_DEBOUNCE_MAX 10s, PILOT_ENABLE_EDS_DEBOUNCE true) before the
	// DiscoveryServer copies them. Everything else is at Istio's defaults.
	if !features.EnableAmbient || !features.EnableAmbientWaypoints {
		fatal(fmt.Errorf("Istio's ambient mode is off although %s=true was set before Istio's init (package init order?)", ambientenv.Variable))
	}
	features.DebounceMax = 10 * time.Second
	features.EnableEDSDebounce = true

	start := time.Now()
	f, err := os.Open(*worldPath)
	if err != nil {
		fatal(err)
	}
	objs, err := decodeObjects(f)
	f.Close()
	if err != nil {
		fatal(fmt.Errorf("-world %s: %v", *worldPath, err))
	}

	xdsLis, err := net.Listen("tcp", *xdsAddr)
	if err != nil {
		fatal(err)
	}
	controlLis, err := net.Listen("tcp", *controlAddr)
	if err != nil {
		fatal(err)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "fanout-istio: %v, exiting\n", s)
		os.Exit(0)
	}()

	// The control API answers from the start: /ready says 503 until Istio is up.
	c := &control{}
	go func() {
		srv := &http.Server{Handler: c.handler(), ReadHeaderTimeout: 10 * time.Second}
		if err := srv.Serve(controlLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fatal(err)
		}
	}()

	is, err := startIstio(&failer{verbose: *verbose}, objs, xdsLis)
	if err != nil {
		fatal(err)
	}
	c.istio.Store(is)
	fmt.Fprintf(os.Stderr, "fanout-istio: ready in %v: %d objects, %d services; xDS on %s, control on %s\n",
		time.Since(start).Round(time.Millisecond), len(objs), len(is.fake.Discovery.Env.Services()), xdsLis.Addr(), controlLis.Addr())
	select {} // until a signal
}

// control is the HTTP control API.
type control struct {
	// istio is set once Istio is up and the world is served.
	istio atomic.Pointer[istio]
}

func (c *control) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		if c.istio.Load() == nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("POST /apply", func(w http.ResponseWriter, r *http.Request) {
		is := c.istio.Load()
		if is == nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		objs, err := decodeObjects(bytes.NewReader(body))
		if err == nil {
			err = is.apply(r.Context(), objs)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		s, err := readStats(r.URL.Query().Get("gc") == "1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
	// Go's profiler, to see where Istio spends its time.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux
}

// stats is what GET /stats answers.
type stats struct {
	PID int `json:"pid"`
	// HeapBytes is HeapAlloc: right after a garbage collection with
	// GET /stats?gc=1.
	HeapBytes uint64 `json:"heapBytes"`
	// CPUSeconds is this process's user and system CPU so far.
	CPUSeconds float64 `json:"cpuSeconds"`
	Goroutines int     `json:"goroutines"`
}

// readStats reads the stats, after a garbage collection with gc. The CPU
// is read last, so that a window of CPU that starts at one reading does
// not hold its collection (as the library's server, test/fanout).
func readStats(gc bool) (stats, error) {
	if gc {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return stats{}, err
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return stats{PID: os.Getpid(), HeapBytes: ms.HeapAlloc, CPUSeconds: cpu.Seconds(), Goroutines: runtime.NumGoroutine()}, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fanout-istio:", err)
	os.Exit(1)
}
