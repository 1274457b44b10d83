package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// PlotSVG draws two line charts side by side: initial sync time and heap
// (HeapAlloc) against endpoint count, one line per system, from the
// medians of each preset in r.
func (r *Report) PlotSVG(w io.Writer) error {
	presets := slices.Clone(r.Presets)
	slices.SortFunc(presets, func(a, b *PresetResult) int { return a.Config.Endpoints() - b.Config.Endpoints() })
	const W, H, panelW = 960, 400, 480
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	panels := []struct {
		title string
		unit  string
		get   func(*SystemResult) float64
	}{
		{"Initial sync time", "s", func(s *SystemResult) float64 { return s.SyncSeconds }},
		{"Heap after GC (HeapAlloc)", "MiB", func(s *SystemResult) float64 { return float64(s.HeapAlloc) / (1 << 20) }},
	}
	colors := map[string]string{Floor: "#555555", Kube: "#1f77b4", KubeShared: "#2ca02c", Aggregate: "#d62728"}
	dashes := map[string]string{Floor: "6,4", Kube: "", KubeShared: "", Aggregate: ""}
	for i, pn := range panels {
		x0 := float64(i*panelW) + 70
		plotW, plotH, y0 := float64(panelW)-100, float64(H)-110, 50.0
		maxX, maxY := 0.0, 0.0
		for _, pr := range presets {
			maxX = math.Max(maxX, float64(pr.Config.Endpoints()))
			for _, s := range pr.Medians {
				maxY = math.Max(maxY, pn.get(&s))
			}
		}
		maxX, maxY = niceCeil(maxX), niceCeil(maxY)
		px := func(v float64) float64 { return x0 + v/maxX*plotW }
		py := func(v float64) float64 { return y0 + plotH - v/maxY*plotH }
		fmt.Fprintf(&b, `<text x="%.0f" y="25" font-size="14" font-weight="bold">%s</text>`+"\n", x0, pn.title)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0, y0+plotH, x0+plotW, y0+plotH)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0, y0, x0, y0+plotH)
		for t := 0; t <= 4; t++ {
			xv, yv := maxX*float64(t)/4, maxY*float64(t)/4
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(xv), y0+plotH+16, short(xv))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, py(yv)+4, short(yv))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", x0, py(yv), x0+plotW, py(yv))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">endpoints</text>`+"\n", x0+plotW/2, y0+plotH+34)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x0-50, y0+plotH/2, x0-50, y0+plotH/2, pn.unit)
		for k, name := range Systems {
			var pts []string
			for _, pr := range presets {
				if s := pr.Median(name); s != nil {
					x, y := px(float64(pr.Config.Endpoints())), py(pn.get(s))
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, colors[name])
				}
			}
			if len(pts) == 0 {
				continue
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s" points="%s"/>`+"\n", colors[name], dashes[name], strings.Join(pts, " "))
			ly := float64(H) - 22
			lx := x0 + float64(k)*120
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", lx, ly, lx+24, ly, colors[name], dashes[name])
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", lx+30, ly+4, name)
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1e-3).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// short formats an axis value: 50000 → "50k", 0.25 → "0.25".
func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}
