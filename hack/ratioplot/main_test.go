package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

func TestReadAndPlot(t *testing.T) {
	in := "# area\tfigure\tbefore\tnow\ttarget\n" +
		"registry\theap\t0.62x\t0.57\t0.5\n" +
		"registry\tsync\t-\t0.55x\t-\n" +
		"serving\tp99 <one> & more\t1.8\t1.7\t0.5\n"
	rows, err := read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].before != 0.62 || rows[0].now != 0.57 || !math.IsNaN(rows[1].before) || !math.IsNaN(rows[1].target) {
		t.Fatalf("read = %+v", rows)
	}
	var out bytes.Buffer
	if err := plot(&out, rows); err != nil {
		t.Fatal(err)
	}
	svg := out.String()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err != io.EOF {
				t.Fatalf("not well-formed SVG: %v", err)
			}
			break
		}
	}
	// The current ratio is printed beside its bar.
	if !strings.Contains(svg, ">0.57x<") {
		t.Error("the current ratio is not printed")
	}
}

func TestReadRejects(t *testing.T) {
	for _, in := range []string{
		"a\tb\t1\t2\n",       // four fields
		"a\tb\t1\t-\t1\n",    // no current ratio
		"a\tb\t1\t0\t1\n",    // zero
		"a\tb\t1\tfast\t1\n", // not a number
	} {
		if _, err := read(strings.NewReader(in)); err == nil {
			t.Errorf("read(%q) accepted it", in)
		}
	}
	if err := plot(&bytes.Buffer{}, nil); err == nil {
		t.Error("plot of nothing did not fail")
	}
}
