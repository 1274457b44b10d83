package debughttp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/test/servetest"
	"github.com/meshreg/meshreg/wds"
	"github.com/meshreg/meshreg/xds"
)

// TestStreams: /streams lists a sidecar's ADS stream and a ztunnel's
// WDS stream on one port, each with what it was last sent and
// acknowledged.
func TestStreams(t *testing.T) {
	reg := fixture()
	st, err := servetest.Start(reg, xds.Options{}, wds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Stop(); err != nil {
			t.Error(err)
		}
	}()
	proxies, workloads, ads := st.XDS, st.WDS, st.ADS
	ctx := context.Background()
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()

	sidecar, err := ads.StreamAggregatedResources(sctx)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := structpb.NewStruct(map[string]any{xds.MetadataNamespace: "shop"})
	req := &discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: "sidecar-1", Metadata: meta}, TypeUrl: resourcev3.EndpointType}
	if err := sidecar.Send(req); err != nil {
		t.Fatal(err)
	}
	resp, err := sidecar.Recv()
	if err != nil {
		t.Fatal(err)
	}
	req.Node, req.VersionInfo, req.ResponseNonce = nil, resp.GetVersionInfo(), resp.GetNonce()
	if err := sidecar.Send(req); err != nil { // ACK
		t.Fatal(err)
	}
	ztunnel, err := ads.DeltaAggregatedResources(sctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ztunnel.Send(&discoveryv3.DeltaDiscoveryRequest{Node: &corev3.Node{Id: "ztunnel-1"}, TypeUrl: wds.TypeURL}); err != nil {
		t.Fatal(err)
	}
	wresp, err := ztunnel.Recv()
	if err != nil {
		t.Fatal(err)
	}

	h := debughttp.New(reg, debughttp.Options{XDS: proxies, WDS: workloads})
	var page debughttp.Page[debughttp.Stream]
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := get(t, h, "/streams")
		if code != 200 {
			t.Fatalf("GET /streams = %d: %s", code, body)
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == 2 && page.Items[0].Types[0].Acked != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if page.Total != 2 || len(page.Items) != 2 {
		t.Fatalf("/streams = %+v, want two streams", page)
	}
	x, w := page.Items[0], page.Items[1]
	if x.Server != "xds" || x.Node != "sidecar-1" || x.Client != "envoy" || x.Variant != "sotw" || len(x.Types) != 1 {
		t.Errorf("the sidecar's stream: %+v", x)
	} else if ty := x.Types[0]; ty.Type != resourcev3.EndpointType || !ty.Wildcard || ty.Sent == nil || ty.Sent.Nonce != resp.GetNonce() ||
		ty.Acked == nil || ty.Acked.Version != resp.GetVersionInfo() || ty.Sent.Resources != len(resp.GetResources()) {
		t.Errorf("the sidecar's load assignments: %+v; want sent and acknowledged %s", ty, resp.GetVersionInfo())
	}
	if w.Server != "wds" || w.Node != "ztunnel-1" || w.Client != "ztunnel" || w.Variant != "delta" || len(w.Types) != 1 {
		t.Errorf("the ztunnel's stream: %+v", w)
	} else if ty := w.Types[0]; ty.Type != wds.TypeURL || !ty.Wildcard || ty.Sent == nil || ty.Sent.Nonce != wresp.GetNonce() ||
		ty.Sent.Resources != len(wresp.GetResources()) || ty.Acked != nil {
		t.Errorf("the ztunnel's addresses: %+v; want sent %s, not acknowledged", ty, wresp.GetNonce())
	}
}
