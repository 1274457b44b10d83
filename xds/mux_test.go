package xds_test

import (
	"context"
	"slices"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/test/servetest"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// TestOneServiceWithWDS: registered with wds.Mux in one call, the
// server and WDS share one gRPC service: on one connection a sidecar's
// state-of-the-world stream gets its load assignment and a ztunnel's
// delta stream its addresses, both open at once.
func TestOneServiceWithWDS(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "cluster-1"})
	if err != nil {
		t.Fatal(err)
	}
	echo := memory.Service("echo", "default").Port("grpc", 8080).VIP("10.96.0.1").Selector(map[string]string{"app": "echo"}).Build()
	reg.AddService(echo)
	reg.AddWorkload(memory.Workload("echo-1", "default").Address("10.1.0.1").Labels(map[string]string{"app": "echo"}).Build())
	reg.SetEndpoints(echo.Key(), memory.Endpoint("10.1.0.1", 9000).Port("grpc").Build())
	st, err := servetest.Start(reg, xds.Options{}, wds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Stop(); err != nil {
			t.Error(err)
		}
	}()
	ads := st.ADS
	ctx := context.Background()
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()

	ztunnel, err := ads.DeltaAggregatedResources(sctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ztunnel.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL}); err != nil {
		t.Fatal(err)
	}
	sidecar, err := ads.StreamAggregatedResources(sctx)
	if err != nil {
		t.Fatal(err)
	}
	name := xds.ClusterName(echo.Hostname, 8080)
	if err := sidecar.Send(&discoveryv3.DiscoveryRequest{
		Node:    node("sidecar", map[string]any{xds.MetadataNamespace: "default"}),
		TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name},
	}); err != nil {
		t.Fatal(err)
	}

	clas, _ := recvCLAs(t, sidecar.Recv)
	if got := claAddrs(clas[name]); !slices.Equal(got, []string{"10.1.0.1"}) {
		t.Errorf("sidecar: %s = %v, want [10.1.0.1]", name, got)
	}
	resp, err := ztunnel.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resp.GetResources() {
		names = append(names, r.GetName())
	}
	if want := []string{"cluster-1//Pod/default/echo-1", "default/echo.default.svc.cluster.local"}; resp.GetTypeUrl() != wds.TypeURL || !slices.Equal(names, want) {
		t.Errorf("ztunnel: %s %q, want %s %q", resp.GetTypeUrl(), names, wds.TypeURL, want)
	}
}
