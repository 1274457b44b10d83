package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/test/bench"
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
	systems := fs.String("systems", strings.Join(bench.Systems, ","), "systems to measure, of floor, kube, aggregate and floor-notify (the floor handing each change to a subscriber as a registry does; measured only when named)")
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
	deliverprofile := fs.String("deliverprofile", "", "write a CPU profile of -profilesystem's churn stream delivered to its watches (no writes) in the first run of the last preset")
	profSystem := fs.String("profilesystem", bench.Aggregate, "system that -memprofile, -syncprofile, -churnprofile and -deliverprofile profile")
	from := fs.String("from", "", "render an earlier JSON report instead of measuring")
	isolate := fs.Bool("isolate", true, "measure each system of each run in a process of its own (this command, run again with -isolate=false)")
	firstRun := fs.Int("firstrun", 0, "index of the first run (set by -isolate for the processes it starts)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		return fmt.Errorf("-benchtime: %w", err)
	}

	var rep *bench.Report
	if *from != "" {
		var err error
		if rep, err = readReport(*from); err != nil {
			return err
		}
	} else {
		if *cpuprofile != "" {
			if *isolate {
				return errors.New("-cpuprofile profiles this process, which measures nothing with -isolate: add -isolate=false")
			}
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
			opts := bench.Options{
				Runs: *runs, Changes: *changes, Systems: strings.Split(*systems, ","),
				ServiceEntries: *withSE, SkipQueries: *noQueries,
				MemProfile: *memprofile, MemProfileSystem: *profSystem, SyncCPUProfile: *syncprofile, ChurnCPUProfile: *churnprofile, DeliveredCPUProfile: *deliverprofile,
				FirstRun: *firstRun, Log: stderr,
			}
			var res *bench.PresetResult
			var err error
			if *isolate {
				res, err = runIsolated(ctx, cfg.Name, opts, *benchtime, stderr)
			} else {
				res, err = bench.Run(ctx, cfg, opts)
			}
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

// runIsolated measures the preset named like bench.Run would, but each
// system of each run in a process of its own: this command, run again
// with -isolate=false for that one system and run, its report read back.
// A process's memory history changes what it measures (a sync that
// follows another system's in the same process reuses the heap that one
// left, and runs faster than a first one), so that every system starts
// as a control plane does: in a fresh process.
func runIsolated(ctx context.Context, preset string, opts bench.Options, benchtime string, stderr io.Writer) (*bench.PresetResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "meshreg-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var (
		cfg    bench.Config
		counts bench.Counts
		runs   []bench.RunResult
	)
	for run := range opts.Runs {
		rr := bench.RunResult{Run: opts.FirstRun + run}
		for _, system := range bench.RunOrder(opts.Systems, rr.Run) {
			out := filepath.Join(dir, fmt.Sprintf("%d-%s.json", rr.Run, system))
			args := []string{
				"-isolate=false", "-preset", preset, "-systems", system, "-runs", "1", "-firstrun", strconv.Itoa(rr.Run),
				"-changes", strconv.Itoa(opts.Changes), "-benchtime", benchtime, "-o", out, "-md", os.DevNull,
				"-serviceentries=" + strconv.FormatBool(opts.ServiceEntries), "-noqueries=" + strconv.FormatBool(opts.SkipQueries),
				"-profilesystem", opts.MemProfileSystem,
			}
			// The process profiles only in run 0, and only -profilesystem.
			for flag, file := range map[string]string{"-memprofile": opts.MemProfile, "-syncprofile": opts.SyncCPUProfile, "-churnprofile": opts.ChurnCPUProfile, "-deliverprofile": opts.DeliveredCPUProfile} {
				if file != "" {
					args = append(args, flag, file)
				}
			}
			cmd := exec.CommandContext(ctx, exe, args...)
			cmd.Stdout, cmd.Stderr = stderr, stderr
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("%s run %d: %s: %s: %w", preset, rr.Run, system, exe, err)
			}
			rep, err := readReport(out)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %s: %w", preset, rr.Run, system, err)
			}
			if len(rep.Presets) != 1 || len(rep.Presets[0].Runs) != 1 || len(rep.Presets[0].Runs[0].Systems) != 1 {
				return nil, fmt.Errorf("%s run %d: %s: the report of %s is not of one preset, run and system", preset, rr.Run, system, out)
			}
			p := rep.Presets[0]
			cfg, counts = p.Config, p.Counts
			rr.Systems = append(rr.Systems, p.Runs[0].Systems[0])
		}
		runs = append(runs, rr)
	}
	return bench.Summarize(cfg, counts, runs, opts.Systems), nil
}

func readReport(path string) (*bench.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return bench.ReadReport(f)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}
