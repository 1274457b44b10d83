// Package servetest runs, in a test, what serves proxies from a
// registry: its proxy view and address index, the xDS and WDS servers
// on one loopback gRPC port (wds.Mux), and a client connection to it,
// as a control plane wires them (README, "Building a control plane").
package servetest

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// Registry is a registry the stack runs.
type Registry interface {
	registry.Reader
	Run(ctx context.Context) error
}

// Stack is what Start runs.
type Stack struct {
	View  *proxyview.View
	Index *address.Index
	XDS   *xds.Server
	WDS   *wds.Server
	// Conn is a client connection to the servers' port; ADS their
	// service on it.
	Conn *grpc.ClientConn
	ADS  discoveryv3.AggregatedDiscoveryServiceClient

	stop func() error
}

// Start runs reg and the stack over it, with the servers' options
// given, and returns once the view and the index have synced (or
// after 10s, with an error). Stop stops it all.
func Start(reg Registry, xo xds.Options, wo wds.Options) (*Stack, error) {
	s := &Stack{}
	var err error
	if s.View, err = proxyview.New(reg, proxyview.Options{}); err != nil {
		return nil, err
	}
	if s.Index, err = address.New(reg, address.Options{}); err != nil {
		return nil, err
	}
	if s.XDS, err = xds.New(s.View, xo); err != nil {
		return nil, err
	}
	if s.WDS, err = wds.New(s.Index, wo); err != nil {
		return nil, err
	}
	gs := grpc.NewServer()
	wds.Mux{WDS: s.WDS, Other: s.XDS}.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, run := range []func(context.Context) error{reg.Run, s.View.Run, s.Index.Run, s.XDS.Run, s.WDS.Run} {
		wg.Go(func() { fail(run(ctx)) })
	}
	wg.Go(func() { fail(gs.Serve(lis)) })
	s.stop = func() error {
		if s.Conn != nil {
			s.Conn.Close()
		}
		cancel()
		gs.GracefulStop()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return firstErr
	}
	deadline := time.Now().Add(10 * time.Second)
	for !s.View.HasSynced() || !s.Index.HasSynced() {
		if time.Now().After(deadline) {
			return nil, errors.Join(errors.New("servetest: the view and index did not sync in 10s"), s.stop())
		}
		time.Sleep(time.Millisecond)
	}
	if s.Conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	s.ADS = discoveryv3.NewAggregatedDiscoveryServiceClient(s.Conn)
	return s, nil
}

// Stop closes the connection, stops everything Start runs, and returns
// the first error any of it returned.
func (s *Stack) Stop() error { return s.stop() }
