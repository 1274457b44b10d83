package main

import (
	"context"
	"slices"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/wds"
)

// A ztunnel on the ADS port is served the registry's addresses over
// delta xDS, its authorization policies (none) answered, and its stream
// does not hold up shutdown.
func TestWDS(t *testing.T) {
	mem, err := memory.New(memory.Options{ClusterID: "cluster-1"})
	if err != nil {
		t.Fatal(err)
	}
	mem.AddService(memory.Service("echo", "default").Port("grpc", 8080).VIP("10.96.0.1").Selector(map[string]string{"app": "echo"}).Build())
	mem.AddWorkload(memory.Workload("echo-1", "default").Address("10.1.0.1").Labels(map[string]string{"app": "echo"}).Build())
	srv := startServer(t, mem, proxyview.DebounceOptions{}, nil)
	defer srv.stop()

	conn, err := grpc.NewClient(srv.xdsAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const authorization = "type.googleapis.com/istio.security.Authorization"
	for _, typeURL := range []string{wds.TypeURL, authorization} {
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: typeURL}); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]string{}
	for range 2 {
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		got[r.TypeUrl] = []string{}
		for _, res := range r.Resources {
			got[r.TypeUrl] = append(got[r.TypeUrl], res.Name)
		}
	}
	if want := []string{"cluster-1//Pod/default/echo-1", "default/echo.default.svc.cluster.local"}; !slices.Equal(got[wds.TypeURL], want) {
		t.Errorf("addresses %q, want %q", got[wds.TypeURL], want)
	}
	if names, ok := got[authorization]; !ok || len(names) != 0 {
		t.Errorf("authorization %q (answered: %v), want an empty answer", names, ok)
	}

	start := time.Now()
	if err := srv.stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	if took := time.Since(start); took >= shutdownGrace {
		t.Errorf("shutdown with a ztunnel connected took %s", took)
	}
}
