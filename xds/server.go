package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	deltav3 "github.com/envoyproxy/go-control-plane/pkg/server/delta/v3"
	sotwv3 "github.com/envoyproxy/go-control-plane/pkg/server/sotw/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
)

// Options configure a Server. The zero value is valid.
type Options struct {
	// Logger receives the server's logs: nodes registered and gone at
	// debug, refused nodes and NACKs at warn. Default: nil, discard.
	Logger *slog.Logger
	// Debounce says how registry changes are batched into pushes; its
	// zero value is Istio's (proxyview.DefaultQuiet, proxyview.DefaultMax).
	Debounce proxyview.DebounceOptions
	// Metrics, when set, receives the server's Prometheus metrics (see
	// the package doc). A Registerer that refuses them makes New fail.
	// Default: nil, none.
	Metrics prometheus.Registerer
}

func (o Options) defaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// ErrInvalidOptions is wrapped by the error New returns for what it
// cannot use.
var ErrInvalidOptions = errors.New("xds: invalid options")

// Server serves each connected node its view of a proxyview.View over
// the Aggregated Discovery Service, state of the world and delta. Create
// one with New, mount it on a gRPC server with Register (or beside WDS
// with wds.Mux) and run it with Run; it is safe for concurrent use.
type Server struct {
	nodes   *nodeSet
	deb     *proxyview.Debouncer
	metrics *metrics
	log     *slog.Logger

	sotw  sotwv3.Server
	delta deltav3.Server
	// stop ends the streams, which go-control-plane's servers tie to
	// the context they were made with; Run calls it when it returns.
	stop    context.CancelFunc
	running atomic.Bool
}

var _ discoveryv3.AggregatedDiscoveryServiceServer = (*Server)(nil)

// New returns a server of view; Run starts its pushes. The error wraps
// ErrInvalidOptions.
func New(view *proxyview.View, opts Options) (*Server, error) {
	if view == nil {
		return nil, fmt.Errorf("%w: no view", ErrInvalidOptions)
	}
	o := opts.defaults()
	s := &Server{log: o.Logger}
	s.nodes = newNodeSet(view, o.Logger)
	m, err := newMetrics(o.Metrics, s.nodes.Counts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	s.metrics, s.nodes.metrics = m, m
	s.deb, err = proxyview.NewDebouncer(view, s.push, o.Debounce)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	// The streams live until Run returns, not as long as a context
	// given to New: Run is what ends them.
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	cb := callbacks{s}
	s.sotw = sotwv3.NewServer(ctx, s.nodes.Cache(), cb)
	s.delta = deltav3.NewServer(ctx, s.nodes.Cache(), cb)
	return s, nil
}

// Run pushes the view's changes to the connected nodes, debounced, until
// ctx is done; then it ends every stream and returns nil. Streams opened
// before Run are served the view's state then; those opened after it
// returned end at once. A server runs once: a second call returns an
// error wrapping registry.ErrAlreadyRunning.
func (s *Server) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("xds: %w", registry.ErrAlreadyRunning)
	}
	defer s.stop()
	return s.deb.Run(ctx)
}

// push brings every node to a debounced batch of the view's changes.
func (s *Server) push(p proxyview.Push) {
	began := time.Now()
	s.nodes.push(p)
	s.metrics.pushed(p.Changes, time.Since(began))
}

// Register registers the server as the Aggregated Discovery Service of
// r. To serve WDS on the same service, register a wds.Mux holding both
// instead.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(r, s)
}

// StreamAggregatedResources serves one state-of-the-world ADS stream
// until the client closes it, its context is done or Run returns.
func (s *Server) StreamAggregatedResources(st discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return s.sotw.StreamHandler(st, resourcev3.AnyType)
}

// DeltaAggregatedResources serves one delta ADS stream until the client
// closes it, its context is done or Run returns.
func (s *Server) DeltaAggregatedResources(st discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	return s.delta.DeltaStreamHandler(st, resourcev3.AnyType)
}

// Node returns a connected node's status; false for a node not
// connected.
func (s *Server) Node(id string) (NodeStatus, bool) { return s.nodes.Node(id) }

// IDs returns the IDs of the connected nodes, sorted.
func (s *Server) IDs() []string { return s.nodes.IDs() }

// Counts returns the number of connected nodes and the resources they
// are served, summed over nodes, by type URL.
func (s *Server) Counts() (nodes int, resources map[string]int) { return s.nodes.Counts() }

// callbacks implements the sotw and delta servers' callbacks: they log
// streams, register each stream's node on its first request (before the
// request is answered), and count responses and NACKs.
type callbacks struct{ s *Server }

var (
	_ sotwv3.Callbacks  = callbacks{}
	_ deltav3.Callbacks = callbacks{}
)

func (c callbacks) OnStreamOpen(_ context.Context, id int64, _ string) error {
	c.s.log.Debug("xds stream opened", "stream", id)
	return nil
}

func (c callbacks) OnStreamClosed(id int64, node *corev3.Node) {
	c.s.nodes.closeStream(streamKey{id: id})
	c.s.log.Debug("xds stream closed", "stream", id, "node", node.GetId())
}

func (c callbacks) OnStreamRequest(id int64, req *discoveryv3.DiscoveryRequest) error {
	key := streamKey{id: id}
	if err := c.s.nodes.openStream(key, req.GetNode()); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	c.request(key, req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail(), func(s *kindSubscription) {
		s.replace(req.GetResourceNames())
	})
	return nil
}

func (c callbacks) OnStreamResponse(_ context.Context, id int64, req *discoveryv3.DiscoveryRequest, resp *discoveryv3.DiscoveryResponse) {
	c.s.nodes.responded(streamKey{id: id}, req.GetTypeUrl(), Response{
		Version: resp.GetVersionInfo(), Nonce: resp.GetNonce(), Resources: len(resp.GetResources()), At: time.Now(),
	})
}

func (c callbacks) OnDeltaStreamOpen(_ context.Context, id int64, _ string) error {
	c.s.log.Debug("xds delta stream opened", "stream", id)
	return nil
}

func (c callbacks) OnDeltaStreamClosed(id int64, node *corev3.Node) {
	c.s.nodes.closeStream(streamKey{delta: true, id: id})
	c.s.log.Debug("xds delta stream closed", "stream", id, "node", node.GetId())
}

func (c callbacks) OnStreamDeltaRequest(id int64, req *discoveryv3.DeltaDiscoveryRequest) error {
	key := streamKey{delta: true, id: id}
	if err := c.s.nodes.openStream(key, req.GetNode()); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	c.request(key, req.GetTypeUrl(), req.GetResponseNonce(), req.GetErrorDetail(), func(s *kindSubscription) {
		s.change(req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe())
	})
	return nil
}

func (c callbacks) OnStreamDeltaResponse(id int64, req *discoveryv3.DeltaDiscoveryRequest, resp *discoveryv3.DeltaDiscoveryResponse) {
	c.s.nodes.responded(streamKey{delta: true, id: id}, req.GetTypeUrl(), Response{
		Version: resp.GetSystemVersionInfo(), Nonce: resp.GetNonce(), Resources: len(resp.GetResources()), At: time.Now(),
	})
}

// request records a registered stream's request: what it subscribes
// to, and what it says of the response it names; a NACK is counted and
// logged.
func (c callbacks) request(key streamKey, typeURL, nonce string, nack *rpcstatus.Status, record func(*kindSubscription)) {
	st := c.s.nodes.stream(key)
	k, ok := kindOf(typeURL)
	if st == nil || !ok {
		return
	}
	st.request(k, nonce, nack, record)
	if nack != nil {
		c.s.metrics.nacked(typeURL)
		c.s.log.Warn("xds resources rejected", "node", st.node.id, "type", typeURL, "reason", nack.GetMessage())
	}
}
