package wds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/internal/servemetrics"
	"github.com/meshreg/meshreg/registry"
)

// clientKind is the client label of the server's metrics.
const clientKind = "ztunnel"

// TypeURL is the type of the resources the server serves: Istio's
// workload discovery Address, each a *workloadapi.Address.
const TypeURL = "type.googleapis.com/istio.workload.Address"

// Options configure a Server. The zero value is valid.
type Options struct {
	// Logger receives the server's logs: streams opened and closed at
	// debug, NACKs at warn. Default: nil, discard.
	Logger *slog.Logger
	// Metrics, when set, receives the server's Prometheus metrics: the
	// meshreg_xds_* series it shares with package xds's server, with
	// client "ztunnel" (docs/OPERATING.md lists them). A Registerer that
	// refuses them makes New fail. Default: nil, none.
	Metrics prometheus.Registerer
}

func (o Options) defaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// DeltaStream is the server side of a delta ADS stream.
type DeltaStream = discoverygrpc.AggregatedDiscoveryService_DeltaAggregatedResourcesServer

// Server serves an address index over delta xDS. Create one with New
// and run it with Run; it is safe for concurrent use.
type Server struct {
	idx     *address.Index
	log     *slog.Logger
	enc     *encoder
	metrics *servemetrics.Metrics // nil when off

	running atomic.Bool
	// stopped is closed when Run returns: streams end.
	stopped chan struct{}
	nonce   atomic.Uint64

	// mu guards streams; held while handing a change to each stream,
	// which never blocks.
	mu      sync.Mutex
	streams map[*stream]struct{}
}

var _ discoverygrpc.AggregatedDiscoveryServiceServer = (*Server)(nil)

// ErrInvalidOptions is wrapped by the error New returns for what it
// cannot use.
var ErrInvalidOptions = errors.New("wds: invalid options")

// New returns a server of idx; Run starts it. The error wraps
// ErrInvalidOptions.
func New(idx *address.Index, opts Options) (*Server, error) {
	if idx == nil {
		return nil, fmt.Errorf("%w: no index", ErrInvalidOptions)
	}
	o := opts.defaults()
	m, err := servemetrics.New(o.Metrics)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	m.Clients(clientKind)
	m.TypeURLs(TypeURL)
	return &Server{
		idx:     idx,
		log:     o.Logger,
		enc:     newEncoder(),
		metrics: m,
		stopped: make(chan struct{}),
		streams: map[*stream]struct{}{},
	}, nil
}

// Run subscribes to the index and hands each generation's changes to
// the streams until ctx is done; then it ends every stream, with status
// Unavailable, and returns nil. Streams opened after Run returned end at
// once. A server runs once: a second call returns an error wrapping
// registry.ErrAlreadyRunning.
func (s *Server) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("wds: %w", registry.ErrAlreadyRunning)
	}
	defer close(s.stopped)
	unsubscribe := s.idx.Subscribe(s.onChange)
	defer unsubscribe()
	<-ctx.Done()
	return nil
}

// onChange runs on the index's goroutine with each generation. The
// first, the index's state when Run subscribed, has streams opened
// before it check everything against it: they may have missed
// generations published before.
func (s *Server) onChange(c address.Change) {
	s.notifyAll(c.Snapshot, c.Events, c.Initial, c.Since)
}

// notifyAll records a generation's changes, which reached the index at
// since, with every stream and wakes them, never blocking.
func (s *Server) notifyAll(snap *address.Snapshot, events []address.Event, full bool, since time.Time) {
	s.enc.forget(snap, events)
	s.mu.Lock()
	defer s.mu.Unlock()
	for st := range s.streams {
		st.notify(snap, events, full, since)
	}
}

func (s *Server) add(st *stream) {
	s.mu.Lock()
	s.streams[st] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) remove(st *stream) {
	s.mu.Lock()
	delete(s.streams, st)
	s.mu.Unlock()
}

// StreamStatus is one open stream as the server knows it.
type StreamStatus struct {
	// Node is the ID of the node of the stream's first request.
	Node string
	// Opened is when the stream opened.
	Opened time.Time
	// Wildcard says the client subscribes to every address; Subscribed
	// is the number of names it subscribes to besides.
	Wildcard   bool
	Subscribed int
	// Sent is the last Address response sent (its version the index's
	// generation), Acked the last one the client acknowledged (zero for
	// none).
	Sent, Acked Response
	// NACK is the message of the last rejection; "" for none.
	NACK string
	// Owed is when the oldest change recorded for the stream and not
	// sent yet reached the index; zero for none.
	Owed time.Time
}

// Response is one response sent on a stream.
type Response struct {
	// Version is the response's system version; Nonce its nonce.
	Version, Nonce string
	// Resources is the number of resources it held.
	Resources int
	// At is when it was sent.
	At time.Time
}

// Streams returns the open streams, by node ID, then by when they
// opened.
func (s *Server) Streams() []StreamStatus {
	s.mu.Lock()
	streams := slices.Collect(maps.Keys(s.streams))
	s.mu.Unlock()
	out := make([]StreamStatus, 0, len(streams))
	for _, st := range streams {
		st.mu.Lock()
		status := st.status
		status.Owed = st.owed
		st.mu.Unlock()
		out = append(out, status)
	}
	slices.SortFunc(out, func(a, b StreamStatus) int {
		if c := strings.Compare(a.Node, b.Node); c != 0 {
			return c
		}
		return a.Opened.Compare(b.Opened)
	})
	return out
}

func (s *Server) nextNonce() string { return strconv.FormatUint(s.nonce.Add(1), 10) }

// Register registers the server as the Aggregated Discovery Service of
// r: delta streams are served, Address with the index and any other type
// with no resources (see DeltaAggregatedResources); state-of-the-world
// streams are refused. Use Mux to serve other types on the same service.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(r, s)
}

// StreamAggregatedResources refuses state-of-the-world streams with
// status Unimplemented: WDS is delta only.
func (s *Server) StreamAggregatedResources(discoverygrpc.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return status.Error(codes.Unimplemented, "wds: state-of-the-world ADS is not served; use delta ADS")
}

// DeltaAggregatedResources serves one delta ADS stream until the client
// closes it, its context is done or Run returns: Address resources from
// the client's first request of that type, and to each request for
// another type (ztunnel asks for istio.security.Authorization on the
// same stream, and is ready once it has a response of each) a response
// with no resources, the names it asked for removed.
func (s *Server) DeltaAggregatedResources(gs DeltaStream) error {
	first, err := gs.Recv()
	if err != nil {
		return err
	}
	return s.serve(gs, first)
}
