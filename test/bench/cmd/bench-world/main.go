package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/test/bench"
)

func main() {
	preset := flag.String("preset", "large", "the preset")
	flag.Parse()
	if err := write(os.Stdout, *preset); err != nil {
		fmt.Fprintln(os.Stderr, "bench-world:", err)
		os.Exit(1)
	}
}

// write writes the preset's objects to out.
func write(out io.Writer, preset string) error {
	c, ok := bench.Presets[preset]
	if !ok {
		var names []string
		for n := range bench.Presets {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Errorf("no preset %q (have %s)", preset, strings.Join(names, ", "))
	}
	w := bufio.NewWriter(out)
	for _, o := range bench.Generate(c).KubeObjects() {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		w.WriteString("---\n")
		w.Write(b)
	}
	return w.Flush()
}
