package xds_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/xds"
)

func TestProxyFromNode(t *testing.T) {
	ips := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	tests := []struct {
		name string
		node *corev3.Node
		want proxyview.Proxy
		// err, when set, is what the error must contain (besides the
		// node's id).
		err []string
	}{
		{
			name: "istio bootstrap metadata",
			node: &corev3.Node{
				Id: "sidecar~10.1.0.5~echo-1.shop~shop.svc.cluster.local",
				Metadata: mustStruct(map[string]any{
					"NAMESPACE": "shop", "CLUSTER_ID": "east", "NETWORK": "net-1",
					"INSTANCE_IPS": "10.1.0.5,fd00::5", "LABELS": map[string]any{"app": "echo", "version": "v1"},
					"NODE_NAME": "node-7", "DNS_CAPTURE": "true", "ISTIO_VERSION": "1.24.0",
				}),
				Locality: &corev3.Locality{Region: "us-east1", Zone: "us-east1-b", SubZone: "rack1"},
			},
			want: proxyview.Proxy{
				Namespace: "shop", Cluster: "east", Network: "net-1", IPs: ips("10.1.0.5", "fd00::5"),
				Labels: map[string]string{"app": "echo", "version": "v1"}, NodeName: "node-7", DNSCapture: true,
				Locality: model.Locality{Region: "us-east1", Zone: "us-east1-b", Subzone: "rack1"},
			},
		},
		{name: "no metadata", node: &corev3.Node{Id: "bare"}, want: proxyview.Proxy{}},
		{
			name: "spaces and empty entries in the IP list; null values; DNS capture off",
			node: &corev3.Node{Id: "n", Metadata: mustStruct(map[string]any{
				"INSTANCE_IPS": " 10.0.0.1 , ,10.0.0.2,", "NETWORK": nil, "LABELS": nil, "DNS_CAPTURE": "false",
			})},
			want: proxyview.Proxy{IPs: ips("10.0.0.1", "10.0.0.2")},
		},
		{
			name: "a JSON boolean for DNS capture",
			node: &corev3.Node{Id: "n", Metadata: mustStruct(map[string]any{"DNS_CAPTURE": true})},
			want: proxyview.Proxy{DNSCapture: true},
		},
		{
			name: "bad IP",
			node: &corev3.Node{Id: "client-7", Metadata: mustStruct(map[string]any{"INSTANCE_IPS": "10.0.0.1,10.0.0.300"})},
			err:  []string{"INSTANCE_IPS", `"10.0.0.300"`},
		},
		{
			name: "namespace not a string",
			node: &corev3.Node{Id: "client-7", Metadata: mustStruct(map[string]any{"NAMESPACE": 42})},
			err:  []string{"NAMESPACE", "a number"},
		},
		{
			name: "label not a string",
			node: &corev3.Node{Id: "client-7", Metadata: mustStruct(map[string]any{"LABELS": map[string]any{"tier": 1}})},
			err:  []string{"LABELS", `"tier"`},
		},
		{
			name: "labels not a struct",
			node: &corev3.Node{Id: "client-7", Metadata: mustStruct(map[string]any{"LABELS": "app=echo"})},
			err:  []string{"LABELS", "a string"},
		},
		{
			name: "DNS capture not a boolean",
			node: &corev3.Node{Id: "client-7", Metadata: mustStruct(map[string]any{"DNS_CAPTURE": "yes"})},
			err:  []string{"DNS_CAPTURE", `"yes"`},
		},
		{name: "no id", node: &corev3.Node{}, err: []string{"without an id"}},
		{name: "no node", node: nil, err: []string{"no node"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := xds.ProxyFromNode(tt.node)
			if tt.err != nil {
				if err == nil {
					t.Fatalf("ProxyFromNode = %+v, want an error", got)
				}
				if !errors.Is(err, xds.ErrInvalidNode) {
					t.Errorf("error %v does not wrap ErrInvalidNode", err)
				}
				for _, want := range append(tt.err, tt.node.GetId()) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ProxyFromNode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("ProxyFromNode (-want +got):\n%s", diff)
			}
		})
	}
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

func TestClientOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		node *corev3.Node
		want xds.Client
	}{
		{"an Envoy sidecar", &corev3.Node{Id: "a", UserAgentName: "envoy"}, xds.Envoy},
		{"a node that says nothing is a sidecar, as in Istio", &corev3.Node{Id: "a"}, xds.Envoy},
		{"grpc-go", &corev3.Node{Id: "a", UserAgentName: "gRPC Go"}, xds.GRPC},
		{"grpc-java", &corev3.Node{Id: "a", UserAgentName: "gRPC Java"}, xds.GRPC},
		{"Istio's gRPC bootstrap", &corev3.Node{Id: "a", Metadata: mustStruct(map[string]any{"GENERATOR": "grpc"})}, xds.GRPC},
		{"another generator", &corev3.Node{Id: "a", Metadata: mustStruct(map[string]any{"GENERATOR": "envoy"})}, xds.Envoy},
		{"no node", nil, xds.Envoy},
	} {
		if got := xds.ClientOf(tt.node); got != tt.want {
			t.Errorf("%s: ClientOf = %d, want %d", tt.name, got, tt.want)
		}
	}
}
