package fanout

import (
	"fmt"
	"io"
	"slices"
)

// Table writes, as a Markdown table, the medians of the reports of two
// systems (meshreg's and Istio's, runs of the same world and proxies) and
// their ratio, one row per figure.
func Table(out io.Writer, ours, theirs []*Report) error {
	if len(ours) == 0 || len(theirs) == 0 {
		return fmt.Errorf("fanout: a table needs reports of both systems")
	}
	type row struct {
		name string
		get  func(*Report) (float64, bool)
	}
	rows := []row{
		{"connect, all proxies have the world (ms)", func(r *Report) (float64, bool) { return float64(r.Connect), true }},
		{"heap per connected proxy (KiB)", func(r *Report) (float64, bool) { return float64(r.HeapPerProxy) / 1024, true }},
	}
	for i, c := range ours[0].Changes {
		change := func(r *Report) (ChangeReport, bool) {
			if i >= len(r.Changes) || r.Changes[i].Name != c.Name {
				return ChangeReport{}, false
			}
			return r.Changes[i], true
		}
		add := func(what string, f func(ChangeReport) float64) {
			rows = append(rows, row{c.Name + ": " + what, func(r *Report) (float64, bool) {
				cr, ok := change(r)
				return f(cr), ok
			}})
		}
		add("sidecars p50 (ms)", func(c ChangeReport) float64 { return float64(c.Sidecars.P50) })
		add("sidecars p99 (ms)", func(c ChangeReport) float64 { return float64(c.Sidecars.P99) })
		add("sidecars max (ms)", func(c ChangeReport) float64 { return float64(c.Sidecars.Max) })
		add("ztunnels p99 (ms)", func(c ChangeReport) float64 { return float64(c.Ztunnels.P99) })
		add("server CPU (s)", func(c ChangeReport) float64 { return c.CPU })
		add("bytes sent (KiB)", func(c ChangeReport) float64 { return float64(c.Bytes) / 1024 })
	}
	median := func(rs []*Report, get func(*Report) (float64, bool)) (float64, bool) {
		var vs []float64
		for _, r := range rs {
			if v, ok := get(r); ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return 0, false
		}
		slices.Sort(vs)
		return vs[len(vs)/2], true
	}
	r0 := ours[0]
	fmt.Fprintf(out, "%d sidecars (%d EDS clusters each), %d ztunnels; world %+v; medians of %d and %d runs\n\n",
		r0.Sidecars, r0.Clusters, r0.Ztunnels, r0.World, len(ours), len(theirs))
	fmt.Fprintln(out, "| figure | meshreg | Istio | meshreg/Istio |")
	fmt.Fprintln(out, "|---|---:|---:|---:|")
	for _, r := range rows {
		a, ok1 := median(ours, r.get)
		b, ok2 := median(theirs, r.get)
		if !ok1 || !ok2 {
			continue
		}
		ratio := "-"
		if b != 0 {
			ratio = fmt.Sprintf("%.2fx", a/b)
		}
		fmt.Fprintf(out, "| %s | %.4g | %.4g | %s |\n", r.name, a, b, ratio)
	}
	return nil
}
