package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/internal/bench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "meshreg-bench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	testing.Init() // registers test.benchtime, used by the query benchmarks
	fs := flag.NewFlagSet("meshreg-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	presets := fs.String("preset", "small", "comma-separated presets: "+strings.Join(bench.PresetNames, ", "))
	runs := fs.Int("runs", 3, "runs per preset; figures are medians")
	changes := fs.Int("changes", 2000, "length of the churn stream")
	systems := fs.String("systems", strings.Join(bench.Systems, ","), "systems to measure")
	withSE := fs.Bool("serviceentries", false, "add the scenario's ServiceEntries to the aggregate")
	benchtime := fs.String("benchtime", "300ms", "benchtime of each query benchmark")
	noQueries := fs.Bool("noqueries", false, "skip the query benchmarks")
	out := fs.String("o", "", "write the JSON report to this file")
	md := fs.String("md", "", "write the Markdown tables to this file (default: stdout)")
	svg := fs.String("svg", "", "write the SVG plot to this file")
	note := fs.String("note", "", "what else ran on the machine, recorded in the report")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memprofile := fs.String("memprofile", "", "write a heap profile after the sync of -profilesystem in the first run of the last preset")
	syncprofile := fs.String("syncprofile", "", "write a CPU profile of -profilesystem's initial sync in the first run of the last preset")
	churnprofile := fs.String("churnprofile", "", "write a CPU profile of -profilesystem's churn stream in the first run of the last preset")
	profSystem := fs.String("profilesystem", bench.Aggregate, "system that -memprofile, -syncprofile and -churnprofile profile")
	from := fs.String("from", "", "render an earlier JSON report instead of measuring")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		return fmt.Errorf("-benchtime: %w", err)
	}

	var rep *bench.Report
	if *from != "" {
		f, err := os.Open(*from)
		if err != nil {
			return err
		}
		rep, err = bench.ReadReport(f)
		f.Close()
		if err != nil {
			return err
		}
	} else {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		rep = &bench.Report{
			Machine: bench.ThisMachine(*note),
			Options: bench.ReportOptions{Runs: *runs, Changes: *changes, ServiceEntries: *withSE, QueryBenchtime: *benchtime},
		}
		for _, name := range strings.Split(*presets, ",") {
			cfg, ok := bench.Presets[strings.TrimSpace(name)]
			if !ok {
				return fmt.Errorf("unknown preset %q (have %s)", name, strings.Join(bench.PresetNames, ", "))
			}
			res, err := bench.Run(ctx, cfg, bench.Options{
				Runs: *runs, Changes: *changes, Systems: strings.Split(*systems, ","),
				ServiceEntries: *withSE, SkipQueries: *noQueries,
				MemProfile: *memprofile, MemProfileSystem: *profSystem, SyncCPUProfile: *syncprofile, ChurnCPUProfile: *churnprofile, Log: stderr,
			})
			if err != nil {
				return err
			}
			rep.Presets = append(rep.Presets, res)
		}
		rep.Machine.LoadAvg = bench.ThisMachine("").LoadAvg
		if *out != "" {
			if err := writeFile(*out, rep.WriteJSON); err != nil {
				return err
			}
		}
	}
	if *svg != "" {
		if err := writeFile(*svg, rep.PlotSVG); err != nil {
			return err
		}
	}
	if *md != "" {
		return writeFile(*md, rep.WriteMarkdown)
	}
	return rep.WriteMarkdown(stdout)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}
