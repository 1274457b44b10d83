package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/meshreg/meshreg/test/reliability"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run parses the flags and writes the worlds; it returns the exit status:
// 2 for bad flags, 1 when a world cannot be written.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("worlds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1000, "number of worlds")
	seed := fs.Uint64("seed", 1, "seed of the first world; the others follow")
	dir := fs.String("o", "", "output `directory` (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || *n < 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: worlds [-n N] [-seed S] -o DIR")
		return 2
	}
	for s := *seed; s < *seed+uint64(*n); s++ {
		if err := writeWorld(*dir, reliability.Generator{PodNamesPerCluster: true}, s); err != nil {
			fmt.Fprintln(stderr, "worlds:", err)
			return 1
		}
	}
	return 0
}

// writeWorld writes the final world of seed's sequence, every namespace
// selected, as dir/world-<seed>/cluster-<id>.yaml.
func writeWorld(dir string, g reliability.Generator, seed uint64) error {
	w, err := g.Sequence(seed).Final().AllSelected()
	if err != nil {
		return fmt.Errorf("world %d: %w", seed, err)
	}
	wdir := filepath.Join(dir, fmt.Sprintf("world-%d", seed))
	if err := os.MkdirAll(wdir, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, c := range w.Clusters {
		errs = append(errs, os.WriteFile(filepath.Join(wdir, "cluster-"+string(c)+".yaml"), []byte(w.YAML(c)), 0o644))
	}
	return errors.Join(errs...)
}
