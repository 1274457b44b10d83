package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/examples/xds-server/internal/xds"
)

// shutdownGrace bounds how long each server waits for its clients on
// shutdown before closing their connections.
const shutdownGrace = 5 * time.Second

// Registry is what the server needs of a registry: queries, events, a
// lifecycle and its sync state. An *aggregate.Controller is one.
type Registry interface {
	xds.Source
	Run(ctx context.Context) error
	HasSynced() bool
}

// run is the command, with its context and stderr given so tests can
// drive it. It returns the exit status.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "xds-server: %v (see -h)\n", err)
		return 2
	}
	log := slog.New(slog.DiscardHandler)
	if c.verbose {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	reg, err := buildRegistry(c, log)
	if err != nil {
		fmt.Fprintf(stderr, "xds-server: %v\n", err)
		return 2
	}
	xdsLis, err := net.Listen("tcp", c.xdsAddr)
	if err != nil {
		fmt.Fprintf(stderr, "xds-server: xds listener: %v\n", err)
		return 1
	}
	debugLis, err := net.Listen("tcp", c.debugAddr)
	if err != nil {
		xdsLis.Close()
		fmt.Fprintf(stderr, "xds-server: debug listener: %v\n", err)
		return 1
	}
	for _, lis := range []net.Listener{xdsLis, debugLis} {
		if ap := lis.Addr().(*net.TCPAddr).AddrPort(); !ap.Addr().IsLoopback() {
			fmt.Fprintf(stderr, "xds-server: warning: listening on %s, beyond this host, without authentication\n", ap)
		}
	}
	if err := serve(ctx, reg, xdsLis, debugLis, log); err != nil {
		fmt.Fprintf(stderr, "xds-server: %v\n", err)
		return 1
	}
	return 0
}

// serve runs the registry, the xDS updater, the xDS server on xdsLis and
// the debug server on debugLis until ctx is done or one of them fails;
// then it stops them all and returns the first failure. It takes
// ownership of the listeners.
func serve(ctx context.Context, reg Registry, xdsLis, debugLis net.Listener, log *slog.Logger) error {
	caches := xds.NewCaches()
	metrics := debug.NewMetrics(reg, caches.Counts)
	updater := xds.NewUpdater(reg, caches, xds.Options{Logger: log, Observe: metrics.ObserveEvent})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	start := func(name string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil {
				errOnce.Do(func() { firstErr = fmt.Errorf("%s: %w", name, err) })
			}
			cancel() // one part stopping stops them all
		}()
	}
	start("registry", reg.Run)
	start("xds updater", updater.Run)
	start("xds server", func(ctx context.Context) error {
		return xds.Serve(ctx, xdsLis, caches, xds.ServerOptions{
			Logger: log, ShutdownGrace: shutdownGrace, OnStreams: metrics.AddStreams,
		})
	})
	start("debug server", func(ctx context.Context) error {
		return debug.Serve(ctx, debugLis, debug.NewHandler(reg, metrics, log), shutdownGrace, log)
	})
	wg.Wait()
	return firstErr
}
