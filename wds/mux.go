package wds

import (
	"sync/atomic"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Mux is an Aggregated Discovery Service that serves WDS beside another
// ADS server on one gRPC service: a delta stream whose first request is
// for TypeURL goes to WDS, every other stream to Other, its first
// request replayed. On a stream it serves, WDS answers requests for
// other types (ztunnel's istio.security.Authorization) with no
// resources, as it does when registered alone.
type Mux struct {
	// WDS serves the Address streams; nil hands them to Other too.
	WDS *Server
	// Other serves the rest; nil refuses it with status Unimplemented.
	Other discoverygrpc.AggregatedDiscoveryServiceServer
}

var _ discoverygrpc.AggregatedDiscoveryServiceServer = Mux{}

// Register registers m as the Aggregated Discovery Service of r.
func (m Mux) Register(r grpc.ServiceRegistrar) {
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(r, m)
}

// StreamAggregatedResources hands a state-of-the-world stream to Other.
func (m Mux) StreamAggregatedResources(st discoverygrpc.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	if m.Other == nil {
		return status.Error(codes.Unimplemented, "wds: state-of-the-world ADS is not served")
	}
	return m.Other.StreamAggregatedResources(st)
}

// DeltaAggregatedResources reads the stream's first request and hands
// the stream to WDS or Other by its type.
func (m Mux) DeltaAggregatedResources(st DeltaStream) error {
	first, err := st.Recv()
	if err != nil {
		return err
	}
	if first.GetTypeUrl() == TypeURL && m.WDS != nil {
		return m.WDS.serve(st, first)
	}
	if m.Other == nil {
		return status.Errorf(codes.Unimplemented, "wds: type %q is not served", first.GetTypeUrl())
	}
	r := &replayStream{DeltaStream: st}
	r.first.Store(first)
	return m.Other.DeltaAggregatedResources(r)
}

// replayStream is a delta stream whose first Recv returns the request
// already read.
type replayStream struct {
	DeltaStream
	first atomic.Pointer[discoverygrpc.DeltaDiscoveryRequest]
}

func (r *replayStream) Recv() (*discoverygrpc.DeltaDiscoveryRequest, error) {
	if f := r.first.Swap(nil); f != nil {
		return f, nil
	}
	return r.DeltaStream.Recv()
}
