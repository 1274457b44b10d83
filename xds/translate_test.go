package xds_test

import (
	"errors"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/xds"
)

func TestNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{xds.ClusterName(host, 8080), "outbound|8080||echo.default.svc.cluster.local"},
		{xds.ListenerName(host, 8080), "echo.default.svc.cluster.local:8080"},
		{xds.RouteName(host, 8080), "echo.default.svc.cluster.local:8080"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestListener(t *testing.T) {
	l, err := xds.Listener(host, 8080)
	if err != nil {
		t.Fatalf("Listener: %v", err)
	}
	if err := l.ValidateAll(); err != nil {
		t.Fatalf("Listener is not valid: %v", err)
	}
	if l.GetName() != "echo.default.svc.cluster.local:8080" {
		t.Errorf("name = %q", l.GetName())
	}
	var hcm hcmv3.HttpConnectionManager
	if err := l.GetApiListener().GetApiListener().UnmarshalTo(&hcm); err != nil {
		t.Fatalf("api listener is not an HttpConnectionManager: %v", err)
	}
	if err := hcm.ValidateAll(); err != nil {
		t.Errorf("HttpConnectionManager is not valid: %v", err)
	}
	if got := hcm.GetRds().GetRouteConfigName(); got != "echo.default.svc.cluster.local:8080" {
		t.Errorf("RDS route name = %q", got)
	}
	if hcm.GetRds().GetConfigSource().GetAds() == nil {
		t.Errorf("RDS config source is not ADS: %v", hcm.GetRds().GetConfigSource())
	}
	if f := hcm.GetHttpFilters(); len(f) != 1 || f[len(f)-1].GetName() != wellknown.Router {
		t.Errorf("http filters = %v; want the router alone", f)
	}
}

func TestRouteConfiguration(t *testing.T) {
	rc := xds.RouteConfiguration(host, 8080)
	if err := rc.ValidateAll(); err != nil {
		t.Fatalf("RouteConfiguration is not valid: %v", err)
	}
	vh := rc.GetVirtualHosts()
	if len(vh) != 1 || len(vh[0].GetRoutes()) != 1 {
		t.Fatalf("want one virtual host with one route, got %v", vh)
	}
	if got, want := vh[0].GetDomains(), []string{string(host), string(host) + ":8080"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("domains = %v, want %v", got, want)
	}
	if got := vh[0].GetRoutes()[0].GetRoute().GetCluster(); got != xds.ClusterName(host, 8080) {
		t.Errorf("route cluster = %q", got)
	}
}

func TestCluster(t *testing.T) {
	tests := []struct {
		port  model.Port
		http2 bool
	}{
		{model.Port{Name: "grpc", Port: 8080, Protocol: model.GRPC}, true},
		{model.Port{Name: "h2", Port: 8081, Protocol: model.HTTP2}, true},
		{model.Port{Name: "http", Port: 80, Protocol: model.HTTP}, false},
	}
	for _, tt := range tests {
		c, err := xds.Cluster(host, tt.port)
		if err != nil {
			t.Fatalf("Cluster(%v): %v", tt.port, err)
		}
		if err := c.ValidateAll(); err != nil {
			t.Errorf("Cluster(%v) is not valid: %v", tt.port, err)
		}
		if c.GetType() != clusterv3.Cluster_EDS || c.GetEdsClusterConfig().GetEdsConfig().GetAds() == nil {
			t.Errorf("Cluster(%v) is not EDS over ADS: %v", tt.port, c)
		}
		if got := c.GetEdsClusterConfig().GetServiceName(); got != xds.ClusterName(host, tt.port.Port) {
			t.Errorf("Cluster(%v) EDS service name = %q", tt.port, got)
		}
		if got := len(c.GetTypedExtensionProtocolOptions()) > 0; got != tt.http2 {
			t.Errorf("Cluster(%v) HTTP/2 options = %v, want %v", tt.port, got, tt.http2)
		}
	}
}

func TestTranslatable(t *testing.T) {
	tests := []struct {
		svc    model.Service
		client xds.Client
		ok     bool
	}{
		{model.Service{Hostname: host}, xds.GRPC, true},
		{model.Service{Hostname: host}, xds.Envoy, true},
		{model.Service{Hostname: "*.example.com"}, xds.GRPC, false},
		{model.Service{Hostname: "*.example.com"}, xds.Envoy, true},
		{model.Service{Hostname: "db.example.com", Resolution: model.DNS}, xds.Envoy, false},
		{model.Service{Hostname: "db.example.com", Resolution: model.Passthrough}, xds.Envoy, false},
		{model.Service{Hostname: "*.example.com", Resolution: model.DNS}, xds.Envoy, false},
	}
	for _, tt := range tests {
		err := xds.Translatable(&tt.svc, tt.client)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, xds.ErrUnsupported)) {
			t.Errorf("Translatable(%s, %s, client %d) = %v, want ok=%v", tt.svc.Hostname, tt.svc.Resolution, tt.client, err, tt.ok)
		}
	}
}

func TestPortServed(t *testing.T) {
	for _, tt := range []struct {
		port model.Port
		want bool
	}{
		{model.Port{Name: "dns", Port: 53, Protocol: model.UDP}, false},
		{model.Port{Name: "dns-tcp", Port: 53, Protocol: model.TCP}, true},
		{model.Port{Name: "http", Port: 80, Protocol: model.HTTP}, true},
		{model.Port{Name: "x", Port: 9000, Protocol: model.Unsupported}, true},
	} {
		if got := xds.PortServed(tt.port); got != tt.want {
			t.Errorf("PortServed(%+v) = %v, want %v", tt.port, got, tt.want)
		}
	}
}
