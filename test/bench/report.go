package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Report is the output of a harness invocation.
type Report struct {
	Machine Machine         `json:"machine"`
	Options ReportOptions   `json:"options"`
	Presets []*PresetResult `json:"presets"`
}

// ReportOptions records what the figures were measured with.
type ReportOptions struct {
	Runs           int    `json:"runs"`
	Changes        int    `json:"changes"`
	ServiceEntries bool   `json:"service_entries"`
	QueryBenchtime string `json:"query_benchtime,omitempty"`
}

// Machine describes where the figures were measured.
type Machine struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model"`
	// Note says what else ran on the machine (free text).
	Note string `json:"note,omitempty"`
	// LoadAvg is /proc/loadavg at the end of the run.
	LoadAvg string `json:"loadavg,omitempty"`
	Time    string `json:"time"`
}

// ThisMachine describes the machine the process runs on.
func ThisMachine(note string) Machine {
	m := Machine{
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Note: note, Time: time.Now().UTC().Format(time.RFC3339),
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.TrimSpace(string(b))
	}
	return m
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("bench: read report: %w", err)
	}
	return &r, nil
}

// Median returns the medians of a system, or nil.
func (p *PresetResult) Median(system string) *SystemResult {
	for i := range p.Medians {
		if p.Medians[i].System == system {
			return &p.Medians[i]
		}
	}
	return nil
}

// WriteMarkdown writes one table of figures per preset, with each
// registry's ratio to the floor, then the query costs, then cost per
// endpoint across presets.
func (r *Report) WriteMarkdown(w io.Writer) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	for _, pr := range r.Presets {
		c := pr.Counts
		p("### %s: %d services × %d endpoints = %d endpoints (%d pods, %d slices, %d nodes)\n\n",
			pr.Config.Name, c.Services, pr.Config.EndpointsPerService, pr.Config.Endpoints(), c.Pods, c.Slices, c.Nodes)
		floor := pr.Median(Floor)
		// FloorNotify, measured only when asked for, is shown like a
		// registry: its ratio to the floor is what the delivery of an
		// event adds.
		regs := []*SystemResult{pr.Median(FloorNotify), pr.Median(Kube), pr.Median(KubeShared), pr.Median(Aggregate)}
		p("| median of %d runs | floor |", len(pr.Runs))
		for _, s := range regs {
			if s != nil {
				p(" %s | ×floor |", s.System)
			}
		}
		p("\n|---|---:|")
		for _, s := range regs {
			if s != nil {
				p("---:|---:|")
			}
		}
		p("\n")
		row := func(name string, get func(*SystemResult) float64, unit func(float64) string) {
			p("| %s | %s |", name, cell(floor, get, unit))
			for _, s := range regs {
				if s == nil {
					continue
				}
				p(" %s | %s |", unit(get(s)), ratio(get(s), floor, get))
			}
			p("\n")
		}
		// has reports whether any system has the figure: reports older
		// than a figure lack it, and its row is left out.
		has := func(get func(*SystemResult) int64) bool {
			return slices.ContainsFunc(append([]*SystemResult{floor}, regs...), func(s *SystemResult) bool { return s != nil && get(s) != 0 })
		}
		n := float64(pr.Config.Endpoints())
		row("initial sync (wall)", func(s *SystemResult) float64 { return s.SyncSeconds }, secs)
		row("initial sync (CPU)", func(s *SystemResult) float64 { return s.SyncCPUSeconds }, secs)
		if has(func(s *SystemResult) int64 { return s.SyncMinorFaults }) {
			row("initial sync (kernel CPU)", func(s *SystemResult) float64 { return s.SyncSystemCPUSeconds }, secs)
			row("initial sync (minor page faults)", func(s *SystemResult) float64 { return float64(s.SyncMinorFaults) }, num)
		}
		row("heap after GC (HeapAlloc)", func(s *SystemResult) float64 { return float64(s.HeapAlloc) }, mib)
		row("heap after GC (HeapInuse)", func(s *SystemResult) float64 { return float64(s.HeapInuse) }, mib)
		row("heap per endpoint", func(s *SystemResult) float64 { return float64(s.HeapAlloc) / n }, bytesUnit)
		row("churn write→event p50", func(s *SystemResult) float64 { return float64(s.Churn.P50) }, dur)
		row("churn write→event p99", func(s *SystemResult) float64 { return float64(s.Churn.P99) }, dur)
		row("churn CPU per change (incl. write)", func(s *SystemResult) float64 { return float64(s.Churn.CPUPerChange) }, dur)
		row("churn CPU per change (handler: less write)", func(s *SystemResult) float64 { return float64(s.Churn.HandlerCPUPerChange) }, dur)
		if has(func(s *SystemResult) int64 { return s.Churn.SteadyCPUPerChange }) {
			row("churn CPU per change, median of 8 parts (incl. write)", func(s *SystemResult) float64 { return float64(s.Churn.SteadyCPUPerChange) }, dur)
			row("churn CPU per change, median of 8 parts (handler)", func(s *SystemResult) float64 { return float64(s.Churn.HandlerSteadyCPUPerChange) }, dur)
		}
		if has(func(s *SystemResult) int64 { return s.Churn.DeliveredSteadyCPUPerChange }) {
			row("churn delivered to the watches, no write: CPU per change, median of 8 parts", func(s *SystemResult) float64 { return float64(s.Churn.DeliveredSteadyCPUPerChange) }, dur)
			row("churn delivered to the watches, no write: CPU per change, whole stream", func(s *SystemResult) float64 { return float64(s.Churn.DeliveredCPUPerChange) }, dur)
			row("churn delivered to the watches, no write: allocs per change", func(s *SystemResult) float64 { return float64(s.Churn.DeliveredAllocsPerChange) }, num)
			row("churn delivered to the watches, no write: p50", func(s *SystemResult) float64 { return float64(s.Churn.DeliveredP50) }, dur)
		}
		if has(func(s *SystemResult) int64 { return s.Churn.WriteSteadyCPUPerChange }) {
			row("churn writes alone on the system's clientset, median of 8 parts", func(s *SystemResult) float64 { return float64(s.Churn.WriteSteadyCPUPerChange) }, dur)
		}
		row("churn allocs per change (incl. write)", func(s *SystemResult) float64 { return float64(s.Churn.AllocsPerChange) }, num)
		row("churn allocs per change (handler: less write)", func(s *SystemResult) float64 { return float64(s.Churn.HandlerAllocsPerChange) }, num)
		row("churn bytes allocated per change", func(s *SystemResult) float64 { return float64(s.Churn.BytesPerChange) }, bytesUnit)
		row("churn burst events/s", func(s *SystemResult) float64 { return s.Churn.EventsPerSecond }, num)
		if len(pr.Runs) > 0 {
			var ws, wss, wa []int64
			for _, run := range pr.Runs {
				ws = append(ws, run.WriteCPUPerChange)
				wss = append(wss, run.WriteSteadyCPUPerChange)
				wa = append(wa, run.WriteAllocsPerChange)
			}
			p("\nWrites alone (no system running; each system's figures subtract those measured on its own clientset, just before it started; here the median over all): %s CPU (median of 8 parts: %s) and %d allocations per change.\n",
				dur(float64(median(ws))), dur(float64(median(wss))), median(wa))
		}
		var qs []*SystemResult
		for _, s := range regs {
			if s != nil && len(s.Queries) > 0 {
				qs = append(qs, s)
			}
		}
		if len(qs) > 0 {
			p("\n| query | result size |")
			for _, s := range qs {
				p(" %s ns/op | allocs/op |", s.System)
			}
			p("\n|---|---:|")
			for range qs {
				p("---:|---:|")
			}
			p("\n")
			for i, q := range qs[0].Queries {
				p("| %s | %d |", q.Name, q.Result)
				for _, s := range qs {
					p(" %.0f | %d |", s.Queries[i].NsPerOp, s.Queries[i].AllocsPerOp)
				}
				p("\n")
			}
		}
		p("\n")
	}
	if len(r.Presets) > 1 {
		p("### Cost per endpoint across sizes (medians)\n\n| preset | endpoints |")
		for _, s := range Systems {
			p(" %s sync µs/ep | %s heap B/ep |", s, s)
		}
		p("\n|---|---:|")
		for range Systems {
			p("---:|---:|")
		}
		p("\n")
		for _, pr := range r.Presets {
			n := float64(pr.Config.Endpoints())
			p("| %s | %d |", pr.Config.Name, pr.Config.Endpoints())
			for _, name := range Systems {
				if s := pr.Median(name); s != nil {
					p(" %.2f | %.0f |", s.SyncSeconds*1e6/n, float64(s.HeapAlloc)/n)
				} else {
					p(" – | – |")
				}
			}
			p("\n")
		}
		p("\n")
	}
	return nil
}

func cell(s *SystemResult, get func(*SystemResult) float64, unit func(float64) string) string {
	if s == nil {
		return "–"
	}
	return unit(get(s))
}

func ratio(v float64, floor *SystemResult, get func(*SystemResult) float64) string {
	if floor == nil || get(floor) <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v/get(floor))
}

func secs(v float64) string      { return fmt.Sprintf("%.3f s", v) }
func mib(v float64) string       { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
func bytesUnit(v float64) string { return fmt.Sprintf("%.0f B", v) }
func num(v float64) string       { return fmt.Sprintf("%.0f", v) }
func dur(v float64) string {
	d := time.Duration(v)
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", v/1e6)
	default:
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
}
