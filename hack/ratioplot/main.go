// Command ratioplot draws BENCHMARKS.md's plot of meshreg against Istio:
// for every figure, the ratio meshreg/Istio before and now, on a log
// scale, with parity and the target marked.
//
//	cd hack/ratioplot && go run . < ../../test/bench/results/vs-istio.tsv > ../../test/bench/results/vs-istio.svg
//
// The input is tab-separated, one figure a line: area, figure, before,
// now, target; a ratio is a number, or "-" when not measured; target "-"
// for none. Lines starting with # are comments.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// row is one figure: its ratios before and now, and its target; NaN for
// none.
type row struct {
	area, figure        string
	before, now, target float64
}

func main() {
	rows, err := read(os.Stdin)
	if err == nil {
		err = plot(os.Stdout, rows)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratioplot:", err)
		os.Exit(1)
	}
}

func read(r io.Reader) ([]row, error) {
	var out []row
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: %d fields, want 5 (area, figure, before, now, target)", n, len(f))
		}
		rw := row{area: f[0], figure: f[1]}
		for i, p := range []*float64{&rw.before, &rw.now, &rw.target} {
			v, err := ratio(f[2+i])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			*p = v
		}
		if math.IsNaN(rw.now) {
			return nil, fmt.Errorf("line %d: no current ratio", n)
		}
		out = append(out, rw)
	}
	return out, sc.Err()
}

// ratio parses a ratio: a positive number, optionally followed by "x";
// "-" is NaN.
func ratio(s string) (float64, error) {
	if s == "-" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("ratio %q: want a positive number or -", s)
	}
	return v, nil
}

// The scale: log10 of the ratio from lo to hi across the plot's width.
const (
	lo, hi             = 0.01, 4.0
	left, width, rowH  = 360, 440, 22
	colorBefore, color = "#a0aec0", "#2b6cb0"
)

func x(v float64) float64 {
	v = min(max(v, lo), hi)
	return left + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*width
}

func plot(w io.Writer, rows []row) error {
	if len(rows) == 0 {
		return fmt.Errorf("no figures")
	}
	top := 50
	height := top + len(rows)*rowH + 30
	for i := range rows {
		if i == 0 || rows[i].area != rows[i-1].area {
			height += rowH
		}
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`, left+width+70, height)
	p(`<text x="10" y="18" font-size="14">meshreg / Istio on the same data (log scale; less is better)</text>`)
	p(`<rect x="10" y="28" width="10" height="10" fill="%s"/><text x="24" y="37">before</text>`, colorBefore)
	p(`<rect x="80" y="28" width="10" height="10" fill="%s"/><text x="94" y="37">now</text>`, color)
	p(`<line x1="140" y1="33" x2="150" y2="33" stroke="#c53030" stroke-width="2"/><text x="154" y="37">target</text>`)
	for _, t := range []float64{0.01, 0.03, 0.1, 0.3, 0.5, 1, 3} {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, x(t), top-6, x(t), height-24, map[bool]string{true: "#2d3748", false: "#e2e8f0"}[t == 1])
		p(`<text x="%.1f" y="%d" text-anchor="middle">%gx</text>`, x(t), height-8, t)
	}
	y := top
	for i, r := range rows {
		if i == 0 || r.area != rows[i-1].area {
			p(`<text x="10" y="%d" font-weight="bold">%s</text>`, y+15, esc(r.area))
			y += rowH
		}
		p(`<text x="20" y="%d">%s</text>`, y+15, esc(r.figure))
		if !math.IsNaN(r.before) {
			p(`<rect x="%d" y="%d" width="%.1f" height="7" fill="%s"/>`, left, y+3, x(r.before)-left, colorBefore)
		}
		p(`<rect x="%d" y="%d" width="%.1f" height="9" fill="%s"/>`, left, y+10, x(r.now)-left, color)
		p(`<text x="%.1f" y="%d">%.2fx</text>`, x(r.now)+4, y+18, r.now)
		if !math.IsNaN(r.target) {
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c53030" stroke-width="2"/>`, x(r.target), y+1, x(r.target), y+rowH-1)
		}
		y += rowH
	}
	p(`</svg>`)
	return nil
}

// esc escapes text for SVG.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
