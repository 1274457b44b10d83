package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/test/fanout"
)

func main() {
	world := flag.String("world", "", "the world: a YAML file of Namespaces, Services, EndpointSlices and Pods (required)")
	xdsAddr := flag.String("xds-addr", "127.0.0.1:15010", "ADS listen address")
	controlAddr := flag.String("control-addr", "127.0.0.1:15014", "control API listen address")
	verbose := flag.Bool("v", false, "log to stderr")
	flag.Parse()
	if *world == "" {
		fmt.Fprintln(os.Stderr, "fanout-server: -world is required")
		os.Exit(2)
	}
	if err := run(*world, *xdsAddr, *controlAddr, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "fanout-server:", err)
		os.Exit(1)
	}
}

func run(world, xdsAddr, controlAddr string, verbose bool) error {
	objs, err := manifest.LoadFile(world)
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	if verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := fanout.NewServer(objs, log)
	if err != nil {
		return err
	}
	xdsLis, err := net.Listen("tcp", xdsAddr)
	if err != nil {
		return err
	}
	controlLis, err := net.Listen("tcp", controlAddr)
	if err != nil {
		xdsLis.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Run(ctx, xdsLis, controlLis)
}
