package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	deltav3 "github.com/envoyproxy/go-control-plane/pkg/server/delta/v3"
	sotwv3 "github.com/envoyproxy/go-control-plane/pkg/server/sotw/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshreg/meshreg/wds"
)

// ServerOptions configure Serve. The zero value is valid.
type ServerOptions struct {
	// Logger receives the server's log records. Default: discard.
	Logger *slog.Logger
	// ShutdownGrace bounds how long Serve waits for its connections to
	// close after ctx is done before it closes them. Default: 5s.
	ShutdownGrace time.Duration
	// OnStreams is called with +1 when a client opens an ADS stream and
	// -1 when the stream ends; WDS streams are not counted. Default:
	// nothing.
	OnStreams func(delta int)
	// WDS, when set, serves the delta streams of Istio's workload
	// discovery (istio.workload.Address, what ztunnel asks for) on the
	// same service, through wds.Mux. Default: nil, not served.
	WDS *wds.Server
}

func (o ServerOptions) defaults() ServerOptions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 5 * time.Second
	}
	if o.OnStreams == nil {
		o.OnStreams = func(int) {}
	}
	return o
}

// Serve answers the Aggregated Discovery Service on lis from nodes until
// ctx is done, in both its state-of-the-world and delta variants (what
// gRPC clients and Envoy use). Then it stops the server, gracefully within
// ServerOptions.ShutdownGrace, and returns nil; an error means the server
// failed.
//
// Each stream's first request registers its node with nodes (see
// Nodes); a node whose metadata is refused ends the stream with status
// InvalidArgument and the reason.
//
// The ADS handlers are go-control-plane's own sotw and delta servers;
// pkg/server/v3, which bundles them with the per-type services, would
// also pull in the rate-limit service's module, which nothing here uses.
func Serve(ctx context.Context, lis net.Listener, nodes *Nodes, opts ServerOptions) error {
	opts = opts.defaults()
	// The xDS streams end when srvCtx is done, which lets GracefulStop
	// finish.
	srvCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cb := callbacks{opts: opts, nodes: nodes}
	ads := &adsServer{
		sotw:  sotwv3.NewServer(srvCtx, nodes.Cache(), cb),
		delta: deltav3.NewServer(srvCtx, nodes.Cache(), cb),
	}
	var svc discoveryv3.AggregatedDiscoveryServiceServer = ads
	if opts.WDS != nil {
		svc = wds.Mux{WDS: opts.WDS, Other: ads}
	}
	gs := grpc.NewServer()
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(gs, svc)

	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	opts.Logger.Info("xds server listening", "addr", lis.Addr().String())

	select {
	case err := <-served:
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("xds server on %s: %w", lis.Addr(), err)
		}
		return nil
	case <-ctx.Done():
	}
	cancel()
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(opts.ShutdownGrace)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		opts.Logger.Warn("xds server did not stop in time; closing its connections", "grace", opts.ShutdownGrace.String())
		gs.Stop()
		<-stopped
	}
	<-served
	opts.Logger.Info("xds server stopped")
	return nil
}

// adsServer is the Aggregated Discovery Service over go-control-plane's
// stream handlers.
type adsServer struct {
	discoveryv3.UnimplementedAggregatedDiscoveryServiceServer
	sotw  sotwv3.Server
	delta deltav3.Server
}

func (s *adsServer) StreamAggregatedResources(st discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return s.sotw.StreamHandler(st, resourcev3.AnyType)
}

func (s *adsServer) DeltaAggregatedResources(st discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	return s.delta.DeltaStreamHandler(st, resourcev3.AnyType)
}

// callbacks implements the sotw and delta servers' callbacks: they count
// and log streams, register each stream's node with Nodes on its first
// request (before the request is answered) and count the responses.
type callbacks struct {
	opts  ServerOptions
	nodes *Nodes
}

var (
	_ sotwv3.Callbacks  = callbacks{}
	_ deltav3.Callbacks = callbacks{}
)

func (c callbacks) OnStreamOpen(_ context.Context, id int64, _ string) error {
	c.opts.OnStreams(1)
	c.opts.Logger.Debug("xds stream opened", "stream", id)
	return nil
}

func (c callbacks) OnStreamClosed(id int64, node *corev3.Node) {
	c.opts.OnStreams(-1)
	c.nodes.closeStream(streamKey{id: id})
	c.opts.Logger.Debug("xds stream closed", "stream", id, "node", node.GetId())
}

func (c callbacks) OnStreamRequest(id int64, req *discoveryv3.DiscoveryRequest) error {
	return refusal(c.nodes.openStream(streamKey{id: id}, req.GetNode()))
}

func (c callbacks) OnStreamResponse(_ context.Context, id int64, req *discoveryv3.DiscoveryRequest, _ *discoveryv3.DiscoveryResponse) {
	c.nodes.responded(streamKey{id: id}, req.GetTypeUrl())
}

func (c callbacks) OnDeltaStreamOpen(_ context.Context, id int64, _ string) error {
	c.opts.OnStreams(1)
	c.opts.Logger.Debug("xds delta stream opened", "stream", id)
	return nil
}

func (c callbacks) OnDeltaStreamClosed(id int64, node *corev3.Node) {
	c.opts.OnStreams(-1)
	c.nodes.closeStream(streamKey{delta: true, id: id})
	c.opts.Logger.Debug("xds delta stream closed", "stream", id, "node", node.GetId())
}

func (c callbacks) OnStreamDeltaRequest(id int64, req *discoveryv3.DeltaDiscoveryRequest) error {
	return refusal(c.nodes.openStream(streamKey{delta: true, id: id}, req.GetNode()))
}

func (c callbacks) OnStreamDeltaResponse(id int64, req *discoveryv3.DeltaDiscoveryRequest, _ *discoveryv3.DeltaDiscoveryResponse) {
	c.nodes.responded(streamKey{delta: true, id: id}, req.GetTypeUrl())
}

// refusal turns a node's refusal into the status the stream ends with.
func refusal(err error) error {
	if err == nil {
		return nil
	}
	return status.Error(codes.InvalidArgument, err.Error())
}
