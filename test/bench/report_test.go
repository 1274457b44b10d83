package bench_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/test/bench"
)

func sampleReport() *bench.Report {
	mk := func(name string, n int, sync float64, heap int64) *bench.PresetResult {
		cfg := bench.Config{Name: name, Services: n, EndpointsPerService: 10}
		return &bench.PresetResult{
			Config: cfg, Runs: []bench.RunResult{{}},
			Medians: []bench.SystemResult{
				{System: bench.Floor, SyncSeconds: sync, SyncSystemCPUSeconds: sync / 4, SyncMinorFaults: 1000, HeapAlloc: heap, Churn: bench.ChurnResult{HandlerCPUPerChange: 100, DeliveredSteadyCPUPerChange: 10_000}},
				{System: bench.Kube, SyncSeconds: 2 * sync, SyncSystemCPUSeconds: sync / 2, SyncMinorFaults: 1250, HeapAlloc: heap / 2, Churn: bench.ChurnResult{HandlerCPUPerChange: 300, DeliveredSteadyCPUPerChange: 25_000},
					Queries: []bench.QueryResult{{Name: bench.QGetService, NsPerOp: 42, Result: 1}}},
			},
		}
	}
	return &bench.Report{Presets: []*bench.PresetResult{mk("b", 200, 2, 4<<20), mk("a", 100, 1, 2<<20)}}
}

func TestMarkdownRatios(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"| initial sync (wall) | 2.000 s | 4.000 s | 2.00× |",
		"| initial sync (kernel CPU) | 0.500 s | 1.000 s | 2.00× |",
		"| initial sync (minor page faults) | 1000 | 1250 | 1.25× |",
		"| heap after GC (HeapAlloc) | 4.0 MiB | 2.0 MiB | 0.50× |",
		"| churn CPU per change (handler: less write) | 0.1 µs | 0.3 µs | 3.00× |",
		"| churn delivered to the watches, no write: CPU per change, median of 8 parts | 10.0 µs | 25.0 µs | 2.50× |",
		"| GetService | 1 | 42 | 0 |",
		"### Cost per endpoint across sizes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// TestMarkdownOmitsAbsentFigures: a report from before a figure was
// measured renders without its rows rather than with zeros.
func TestMarkdownOmitsAbsentFigures(t *testing.T) {
	r := sampleReport()
	for _, pr := range r.Presets {
		for i := range pr.Medians {
			pr.Medians[i].SyncSystemCPUSeconds, pr.Medians[i].SyncMinorFaults = 0, 0
			pr.Medians[i].Churn.DeliveredSteadyCPUPerChange = 0
		}
	}
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, absent := range []string{"initial sync (kernel CPU)", "initial sync (minor page faults)", "churn delivered to the watches"} {
		if strings.Contains(out, absent) {
			t.Errorf("markdown has a row %q for a figure no system has:\n%s", absent, out)
		}
	}
	if !strings.Contains(out, "| initial sync (wall) |") {
		t.Errorf("markdown lacks the sync row:\n%s", out)
	}
}

// TestMarkdownFloorNotifyColumn: the floor-notify variant, when measured,
// gets a column and a ratio of its own, before the registries'.
func TestMarkdownFloorNotifyColumn(t *testing.T) {
	r := sampleReport()
	for _, pr := range r.Presets {
		pr.Medians = append(pr.Medians, bench.SystemResult{System: bench.FloorNotify, SyncSeconds: 1.5 * pr.Medians[0].SyncSeconds,
			Churn: bench.ChurnResult{DeliveredSteadyCPUPerChange: 12_000}})
	}
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"| median of 1 runs | floor | floor-notify | ×floor | kube | ×floor |",
		"| initial sync (wall) | 2.000 s | 3.000 s | 1.50× | 4.000 s | 2.00× |",
		"| churn delivered to the watches, no write: CPU per change, median of 8 parts | 10.0 µs | 12.0 µs | 1.20× | 25.0 µs | 2.50× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestPlotSVGWellFormed(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().PlotSVG(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&buf)
	lines := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	// Two panels, two systems with data.
	if lines != 4 {
		t.Errorf("got %d polylines, want 4", lines)
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := bench.ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Presets[0].Median(bench.Kube); m == nil || m.HeapAlloc != 2<<20 || m.Queries[0].NsPerOp != 42 {
		t.Errorf("round trip lost figures: %+v", m)
	}
}
