package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/meshconfig"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/sources"
)

// usageError is a problem with the command line: reported in one line,
// exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

// options are the parsed flags.
type options struct {
	sources     sources.Flags
	output      string
	watch       bool
	syncTimeout time.Duration
	verbose     bool
	// multiNetwork and meshConfig are the address index's
	// Options.MultiNetwork and the mesh config its ServiceScopes come
	// from (-o addresses).
	multiNetwork bool
	meshConfig   string
	// steps are -step DIR=OUT flags (see steps.go).
	steps stepFlags
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("registry-dump", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	o.sources.Register(fs)
	fs.StringVar(&o.output, "o", "table", "output `format`: table, json, yaml, or addresses (Istio ambient's address index, as JSON)")
	fs.BoolVar(&o.watch, "watch", false, "keep running and print each change")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 30*time.Second, "how long to wait for live clusters to sync")
	fs.BoolVar(&o.verbose, "v", false, "log to stderr")
	fs.BoolVar(&o.multiNetwork, "multi-network", false, "with -o addresses: Istio's AMBIENT_ENABLE_MULTI_NETWORK, every cluster in the index (else the first, the config cluster, alone)")
	fs.Var(&o.steps, "step", "with -o addresses: `DIR=OUT`, after printing, bring the clusters DIR/cluster-<id>.yaml names to those manifests and write the index to OUT (repeatable, in order)")
	fs.StringVar(&o.meshConfig, "mesh-config", "", "Istio's mesh config `file`: its serviceEntryVisibility, and with -o addresses its serviceScopeConfigs (which Services are global)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: registry-dump [flags]\n\nWith no flags, prints an embedded two-cluster demo.\n\nFlags:")
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q (manifests go after -f or -cluster)", fs.Arg(0))}
	}
	switch o.output {
	case "table", "json", "yaml":
	case "addresses":
		if o.watch {
			return nil, usageError{errors.New("-watch prints the registry's changes; it does not go with -o addresses")}
		}
	default:
		if o.multiNetwork || len(o.steps) > 0 {
			return nil, usageError{errors.New("-multi-network and -step go with -o addresses")}
		}
		return nil, usageError{fmt.Errorf("-o %q: want table, json, yaml or addresses", o.output)}
	}
	return o, nil
}

// run is the command, with its streams and context given, so tests can
// drive it. It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "registry-dump: %v (see -h)\n", err)
		return 2
	}
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	cfg, err := o.sources.Config(logger)
	if err != nil {
		fmt.Fprintf(stderr, "registry-dump: %v (see -h)\n", err)
		return 2
	}
	mesh := &meshconfig.Config{}
	if o.meshConfig != "" {
		data, err := os.ReadFile(o.meshConfig)
		if err == nil {
			mesh, err = meshconfig.Parse(data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "registry-dump: -mesh-config: %v\n", err)
			return 2
		}
		cfg.ServiceEntryVisibility = mesh.ServiceEntryVisibility
	}
	if len(cfg.Clusters) == 0 {
		cfg.Clusters, err = demoClusters()
		if err != nil {
			fmt.Fprintf(stderr, "registry-dump: demo: %v\n", err)
			return 1
		}
	}
	built, err := sources.Build(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "registry-dump: %v\n", err)
		return 2
	}

	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- built.Aggregate.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if err := waitForSync(ctx, built.Aggregate, o.syncTimeout); err != nil {
		fmt.Fprintf(stderr, "registry-dump: %v\n", err)
		return 1
	}
	if o.output == "addresses" {
		opts := address.Options{TrustDomain: cfg.TrustDomain, MultiNetwork: o.multiNetwork, ServiceScopes: mesh.ServiceScopes}
		if err := writeAddresses(ctx, stdout, built, opts, o.steps, o.syncTimeout); err != nil {
			fmt.Fprintf(stderr, "registry-dump: %v\n", err)
			return 1
		}
		return 0
	}
	if err := write(stdout, o.output, registry.NewDump(built.Discovery)); err != nil {
		fmt.Fprintf(stderr, "registry-dump: %v\n", err)
		return 1
	}
	if o.watch {
		if err := watch(ctx, built, o, stdout); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "registry-dump: %v\n", err)
			return 1
		}
	}
	return 0
}

func waitForSync(ctx context.Context, r registry.Reader, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := registry.WaitSynced(ctx, r); errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("registry not synced after %s", timeout)
	} else if err != nil {
		return err
	}
	return nil
}

func write(w io.Writer, format string, d *registry.Dump) error {
	switch format {
	case "json":
		return d.WriteJSON(w)
	case "yaml":
		var buf strings.Builder
		if err := d.WriteJSON(&buf); err != nil {
			return err
		}
		y, err := yaml.JSONToYAML([]byte(buf.String()))
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	default:
		return writeTable(w, d)
	}
}

// writeAddresses runs the address index over the aggregate until it has
// synced and applied everything the aggregate holds, and writes it; then
// it runs the steps.
func writeAddresses(ctx context.Context, w io.Writer, built *sources.Built, opts address.Options, steps []string, timeout time.Duration) error {
	idx, err := built.AddressIndex(opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- idx.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.After(timeout)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	// The aggregate has its initial state (it runs and synced before
	// this is called); the index has it once it synced and has applied
	// every event the aggregate delivered, the aggregate being settled.
	settler := registry.Settler(built.Aggregate)
	for !idx.HasSynced() || !settler.Settled() || !idx.Settled() {
		select {
		case <-deadline:
			return fmt.Errorf("address index not synced after %s", timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	if err := address.WriteJSON(w, idx.Snapshot()); err != nil {
		return err
	}
	return runSteps(ctx, built, idx, steps, timeout)
}
