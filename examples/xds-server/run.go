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

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// shutdownGrace bounds how long each server waits for its clients on
// shutdown before closing their connections.
const shutdownGrace = 5 * time.Second

// Registry is what the server needs of a registry: a registry.Reader
// (what a proxy view reads; network gateways when it has them) that it
// runs. An *aggregate.Controller is one.
type Registry interface {
	registry.Reader
	Run(ctx context.Context) error
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
	prom := prometheus.NewRegistry()
	reg, built, err := buildRegistry(c, log, prom)
	if err != nil {
		fmt.Fprintf(stderr, "xds-server: %v\n", err)
		return 2
	}
	opts := serveOptions{log: log, prom: prom, trustDomain: c.sources.TrustDomain}
	if built != nil {
		// The index reads each cluster's network and the config
		// cluster's Namespaces and Gateways (waypoints).
		idx, err := built.AddressIndex(address.Options{TrustDomain: c.sources.TrustDomain, Logger: log})
		if err != nil {
			fmt.Fprintf(stderr, "xds-server: %v\n", err)
			return 2
		}
		opts.addresses = idx
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
	if len(c.resolve) > 0 {
		opts.resolver = c.resolve
	}
	if err := serve(ctx, reg, xdsLis, debugLis, opts); err != nil {
		fmt.Fprintf(stderr, "xds-server: %v\n", err)
		return 1
	}
	return 0
}

// serveOptions are what serve takes besides the registry and listeners;
// the zero value is valid.
type serveOptions struct {
	// log is the logger; nil logs nothing.
	log *slog.Logger
	// debounce says how pushes are debounced; its zero value is Istio's
	// 100ms quiet, 10s at most.
	debounce proxyview.DebounceOptions
	// prom is what /metrics serves, where the registry's own metrics are
	// when it was built with it; nil is a new registry.
	prom *prometheus.Registry
	// resolver resolves the gateways' host names; nil is the system's.
	resolver proxyview.Resolver
	// addresses is the address index WDS serves; nil is an index over
	// the registry.
	addresses *address.Index
	// trustDomain is the trust domain of that index; "" is
	// cluster.local.
	trustDomain string
}

// addressIndex returns o.addresses, else an index over reg.
func (o serveOptions) addressIndex(reg Registry, log *slog.Logger) (*address.Index, error) {
	if o.addresses != nil {
		return o.addresses, nil
	}
	return address.New(reg, address.Options{TrustDomain: o.trustDomain, Logger: log})
}

// serve runs the registry, its proxy view, the pushes to the xDS nodes,
// the address index and its WDS server, the xDS server on xdsLis and the
// debug server on debugLis until ctx is done or one of them fails; then
// it stops them all and returns the first failure. It takes ownership of
// the listeners.
func serve(ctx context.Context, reg Registry, xdsLis, debugLis net.Listener, o serveOptions) error {
	log, debounce, prom := o.log, o.debounce, o.prom
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if prom == nil {
		prom = prometheus.NewRegistry()
	}
	view, err := proxyview.New(reg, proxyview.Options{Logger: log, Resolver: o.resolver})
	var addrs *address.Index
	if err == nil {
		addrs, err = o.addressIndex(reg, log)
	}
	var workloads *wds.Server
	if err == nil {
		workloads, err = wds.New(addrs, wds.Options{Logger: log, Metrics: prom})
	}
	var proxies *xds.Server
	if err == nil {
		proxies, err = xds.New(view, xds.Options{Logger: log, Debounce: debounce, Metrics: prom})
	}
	if err != nil {
		xdsLis.Close()
		debugLis.Close()
		return err
	}
	gs := grpc.NewServer()
	wds.Mux{WDS: workloads, Other: proxies}.Register(gs)

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
	start("proxy view", view.Run)
	start("xds", proxies.Run)
	start("address index", addrs.Run)
	start("wds", workloads.Run)
	start("grpc server", func(ctx context.Context) error {
		return serveGRPC(ctx, gs, xdsLis, log)
	})
	start("debug server", func(ctx context.Context) error {
		h := debug.NewHandler(ready{reg, view, addrs}, debughttp.Options{View: view, XDS: proxies, WDS: workloads}, debugNodes{proxies}, prom, log)
		return debug.Serve(ctx, debugLis, h, shutdownGrace, log)
	})
	wg.Wait()
	return firstErr
}

// ready is the registry for the debug server, ready once the registry
// and the proxy view and address index built from it have synced.
type ready struct {
	Registry
	view      *proxyview.View
	addresses *address.Index
}

func (r ready) HasSynced() bool {
	return r.Registry.HasSynced() && r.view.HasSynced() && r.addresses.HasSynced()
}

// debugNodes shows the xDS server's nodes to the debug server.
type debugNodes struct{ nodes *xds.Server }

func (d debugNodes) IDs() []string { return d.nodes.IDs() }

func (d debugNodes) Node(id string) (debug.Node, bool) {
	st, ok := d.nodes.Node(id)
	if !ok {
		return debug.Node{}, false
	}
	n := debug.Node{ID: st.ID, Proxy: st.Proxy, Snapshot: st.Snapshot, Streams: st.Streams}
	for _, ts := range st.Types {
		n.Types = append(n.Types, debug.NodeType{
			TypeURL: ts.TypeURL, Version: ts.Version, Resources: ts.Resources, Versions: ts.Versions, Responses: ts.Responses,
		})
	}
	return n, true
}

// serveGRPC serves gs on lis until ctx is done, then stops it, gracefully
// within shutdownGrace. Its streams end first: they end when the xDS and
// WDS servers' Run return, which ctx being done makes them do.
func serveGRPC(ctx context.Context, gs *grpc.Server, lis net.Listener, log *slog.Logger) error {
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	log.Info("xds server listening", "addr", lis.Addr().String())
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("on %s: %w", lis.Addr(), err)
		}
		return nil
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(shutdownGrace)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		log.Warn("xds server did not stop in time; closing its connections", "grace", shutdownGrace.String())
		gs.Stop()
		<-stopped
	}
	<-served
	log.Info("xds server stopped")
	return nil
}
