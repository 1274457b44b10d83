package xds_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/xds"
)

// A proxy's endpoints of one service port, as proxyview gives them,
// become a ClusterLoadAssignment: one locality per group, with the
// group's weight; each endpoint with its weight and health. The second
// locality's workloads are on a network the proxy does not reach: their
// gateway stands for them, with the sum of their weights.
func ExampleLoadAssignment() {
	at := func(ip string, port, w uint32, h model.HealthStatus) proxyview.Endpoint {
		return proxyview.Endpoint{Address: netip.MustParseAddr(ip), Port: port, Weight: w, Health: h}
	}
	gw := &model.NetworkGateway{Network: "net-west", Address: "192.0.2.10", Port: 15443}
	behind := at("192.0.2.10", 15443, 2, model.Healthy)
	behind.Gateway = gw
	cla := xds.LoadAssignment("echo.default.svc.cluster.local", 8080, []proxyview.LocalityEndpoints{
		{Locality: model.ParseLocality("us-east1/us-east1-b"), Weight: 4, Endpoints: []proxyview.Endpoint{
			at("10.0.0.1", 9000, 1, model.Healthy), at("10.0.0.2", 9000, 3, model.Draining),
		}},
		{Locality: model.ParseLocality("us-west1/us-west1-a"), Weight: 2, Endpoints: []proxyview.Endpoint{behind}},
	}, xds.GRPC)
	fmt.Println(cla.GetClusterName())
	for _, loc := range cla.GetEndpoints() {
		l := loc.GetLocality()
		fmt.Printf("  %s/%s weight=%d\n", l.GetRegion(), l.GetZone(), loc.GetLoadBalancingWeight().GetValue())
		for _, lb := range loc.GetLbEndpoints() {
			sa := lb.GetEndpoint().GetAddress().GetSocketAddress()
			fmt.Printf("    %s:%d %s weight=%d\n", sa.GetAddress(), sa.GetPortValue(), lb.GetHealthStatus(), lb.GetLoadBalancingWeight().GetValue())
		}
	}
	// Output:
	// outbound|8080||echo.default.svc.cluster.local
	//   us-east1/us-east1-b weight=4
	//     10.0.0.1:9000 HEALTHY weight=1
	//     10.0.0.2:9000 DRAINING weight=3
	//   us-west1/us-west1-a weight=2
	//     192.0.2.10:15443 HEALTHY weight=2
}

// A server of a memory registry's view on a loopback gRPC server, asked
// for a load assignment by a state-of-the-world client, as Envoy asks.
func ExampleServer() {
	reg, _ := memory.New(memory.Options{})
	echo := memory.Service("echo", "shop").Port("grpc", 8080).Build()
	reg.AddService(echo)
	reg.SetEndpoints(echo.Key(), memory.Endpoint("10.0.0.1", 9000).Port("grpc").Build())
	view, _ := proxyview.New(reg, proxyview.Options{})
	srv, err := xds.New(view, xds.Options{})
	if err != nil {
		panic(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	lis, _ := net.Listen("tcp", "127.0.0.1:0")

	ctx, cancel := context.WithCancel(context.Background())
	var g errgroup.Group
	g.Go(func() error { return reg.Run(ctx) })
	g.Go(func() error { return view.Run(ctx) })
	g.Go(func() error { return srv.Run(ctx) })
	g.Go(func() error { return gs.Serve(lis) })
	defer func() {
		cancel()
		gs.GracefulStop()
		_ = g.Wait()
	}()
	for !view.HasSynced() {
		time.Sleep(time.Millisecond)
	}

	cc, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer cc.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		panic(err)
	}
	meta, _ := structpb.NewStruct(map[string]any{xds.MetadataNamespace: "shop"})
	name := xds.ClusterName(echo.Hostname, 8080)
	_ = stream.Send(&discoveryv3.DiscoveryRequest{
		Node:    &corev3.Node{Id: "sidecar~10.0.9.9~client.shop~shop.svc.cluster.local", Metadata: meta},
		TypeUrl: resourcev3.EndpointType, ResourceNames: []string{name},
	})
	resp, err := stream.Recv()
	if err != nil {
		panic(err)
	}
	for _, r := range resp.GetResources() {
		var cla endpointv3.ClusterLoadAssignment
		_ = r.UnmarshalTo(&cla)
		sa := cla.GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		fmt.Println(cla.GetClusterName(), sa.GetAddress(), sa.GetPortValue())
	}
	// Output:
	// outbound|8080||echo.shop.svc.cluster.local 10.0.0.1 9000
}
