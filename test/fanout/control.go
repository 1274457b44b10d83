package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"runtime"
	"syscall"
	"time"
)

// Stats is what a server's GET /stats answers.
type Stats struct {
	PID int `json:"pid"`
	// HeapBytes is the heap in use: right after a garbage collection
	// with GET /stats?gc=1.
	HeapBytes uint64 `json:"heapBytes"`
	// CPUSeconds is the process's user and system CPU so far.
	CPUSeconds float64 `json:"cpuSeconds"`
	Goroutines int     `json:"goroutines"`
}

// ReadStats returns this process's Stats, after a garbage collection
// with gc. The CPU is read last, so that a window of CPU that starts at
// one reading does not hold its collection.
func ReadStats(gc bool) (Stats, error) {
	if gc {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Stats{}, err
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Stats{PID: syscall.Getpid(), HeapBytes: ms.HeapAlloc, CPUSeconds: cpu.Seconds(), Goroutines: runtime.NumGoroutine()}, nil
}

// Control is a client of a server's control API.
type Control struct {
	// URL is the control address's base URL, "http://host:port".
	URL    string
	Client *http.Client
}

func (c Control) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	return http.DefaultClient
}

// Ready reports whether the server serves the whole world.
func (c Control) Ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/ready", nil)
	if err != nil {
		return false
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// WaitReady polls Ready until it holds or ctx is done.
func (c Control) WaitReady(ctx context.Context) error {
	for !c.Ready(ctx) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("server at %s not ready: %w", c.URL, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// Apply posts YAML objects to create or update.
func (c Control) Apply(ctx context.Context, yaml []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/apply", bytes.NewReader(yaml))
	if err != nil {
		return err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("apply: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// Stats returns the server's Stats, after a garbage collection with gc.
func (c Control) Stats(ctx context.Context, gc bool) (Stats, error) {
	url := c.URL + "/stats"
	if gc {
		url += "?gc=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Stats{}, err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return Stats{}, err
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return Stats{}, fmt.Errorf("stats: %w", err)
	}
	return s, nil
}

// ControlHandler is the control API of a server: ready says whether it
// serves the whole world; apply creates or updates the objects of a YAML
// body. It serves Go's profiles under /debug/pprof/ too.
func ControlHandler(ready func() bool, apply func(ctx context.Context, yaml []byte) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("POST /apply", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := apply(r.Context(), body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		s, err := ReadStats(r.URL.Query().Get("gc") == "1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
	return mux
}
