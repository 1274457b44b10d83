package fanout

import (
	"fmt"
	"io"
	"slices"
)

// Series is one system's reports at one number of proxies.
type Series struct {
	System  string // "meshreg" or "Istio"
	Reports []*Report
}

// Plot writes an SVG bar chart: per change, the sidecars' p99 (in ms)
// of each series, medians over its reports, one group of bars per
// number of proxies.
func Plot(out io.Writer, groups [][]Series) error {
	type bar struct {
		label, system string
		value         float64
	}
	var bars []bar
	var top float64
	for _, g := range groups {
		for _, s := range g {
			if len(s.Reports) == 0 {
				return fmt.Errorf("fanout: no reports of %s", s.System)
			}
			for i, c := range s.Reports[0].Changes {
				var vs []float64
				for _, r := range s.Reports {
					if i < len(r.Changes) {
						vs = append(vs, float64(r.Changes[i].Sidecars.P99))
					}
				}
				slices.Sort(vs)
				v := vs[len(vs)/2]
				top = max(top, v)
				bars = append(bars, bar{fmt.Sprintf("%s, %d sidecars", c.Name, s.Reports[0].Sidecars), s.System, v})
			}
		}
	}
	slices.SortStableFunc(bars, func(a, b bar) int {
		if a.label < b.label {
			return -1
		}
		if a.label > b.label {
			return 1
		}
		return 0
	})
	const (
		left, rowH, width = 330, 18, 420
	)
	height := len(bars)*rowH + 60
	fmt.Fprintf(out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+90, height)
	fmt.Fprintf(out, `<text x="10" y="18" font-size="14">Time until the last sidecar has a change (p99, ms; less is better)</text>`+"\n")
	colors := map[string]string{"meshreg": "#2b6cb0", "Istio": "#c05621"}
	y := 40
	prev := ""
	for _, b := range bars {
		if b.label != prev {
			fmt.Fprintf(out, `<text x="10" y="%d">%s</text>`+"\n", y+13, b.label)
			prev = b.label
		}
		w := int(b.value / top * width)
		fmt.Fprintf(out, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left, y+2, max(w, 1), rowH-4, colors[b.system])
		fmt.Fprintf(out, `<text x="%d" y="%d">%s %.0f</text>`+"\n", left+w+4, y+13, b.system, b.value)
		y += rowH
	}
	fmt.Fprintln(out, "</svg>")
	return nil
}
