package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/meshreg/meshreg/test/fanout"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fanout world|run [flags] (see the package doc)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "world":
		err = world(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	case "table":
		err = table(os.Args[2:])
	case "plot":
		err = plot(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want world, run, table or plot", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

func worldFlags(fs *flag.FlagSet) *fanout.World {
	w := fanout.DefaultWorld
	fs.IntVar(&w.Namespaces, "namespaces", w.Namespaces, "namespaces besides the shared one")
	fs.IntVar(&w.Services, "services", w.Services, "Services per namespace")
	fs.IntVar(&w.SharedServices, "shared", w.SharedServices, "Services of the shared namespace")
	fs.IntVar(&w.Endpoints, "endpoints", w.Endpoints, "Pods per Service")
	return &w
}

func world(args []string) error {
	fs := flag.NewFlagSet("world", flag.ExitOnError)
	w := worldFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	return fanout.WriteYAML(os.Stdout, w.Objects())
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	w := worldFlags(fs)
	o := fanout.Options{}
	fs.StringVar(&o.XDSAddr, "xds-addr", "127.0.0.1:15010", "the server's ADS address")
	fs.StringVar(&o.Control.URL, "control", "http://127.0.0.1:15014", "the server's control API")
	fs.IntVar(&o.Sidecars, "sidecars", 1000, "sidecars to connect")
	fs.IntVar(&o.Ztunnels, "ztunnels", 20, "ztunnels to connect")
	fs.IntVar(&o.StreamsPerConn, "streams-per-conn", 20, "streams per gRPC connection")
	fs.IntVar(&o.Burst, "burst", 100, "endpoint changes in the burst")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound of each wait")
	verbose := fs.Bool("v", false, "log progress to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.World = *w
	if *verbose {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := fanout.Run(ctx, o)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func readReports(paths []string) ([]*fanout.Report, error) {
	var out []*fanout.Report
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r fanout.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, &r)
	}
	return out, nil
}

func plot(dirs []string) error {
	var groups [][]fanout.Series
	for _, d := range dirs {
		var g []fanout.Series
		for _, sys := range []struct{ name, glob string }{{"meshreg", "meshreg-*.json"}, {"Istio", "istio-*.json"}} {
			paths, err := filepath.Glob(filepath.Join(d, sys.glob))
			if err != nil {
				return err
			}
			rs, err := readReports(paths)
			if err != nil {
				return err
			}
			g = append(g, fanout.Series{System: sys.name, Reports: rs})
		}
		groups = append(groups, g)
	}
	return fanout.Plot(os.Stdout, groups)
}

func table(args []string) error {
	i := slices.Index(args, "--")
	if i < 0 {
		return fmt.Errorf("table: want MESHREG.json... -- ISTIO.json...")
	}
	ours, err := readReports(args[:i])
	if err != nil {
		return err
	}
	theirs, err := readReports(args[i+1:])
	if err != nil {
		return err
	}
	return fanout.Table(os.Stdout, ours, theirs)
}
