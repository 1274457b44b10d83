package xds

import (
	"errors"
	"fmt"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshreg/meshreg/model"
)

// ErrUnsupported is returned by Translatable for a service that gets no
// xDS resources.
var ErrUnsupported = errors.New("service not served over xDS")

// connectTimeout is the clusters' connect timeout (Envoy's default is 5s;
// gRPC ignores it).
const connectTimeout = 5 * time.Second

// Translatable reports whether a service gets xDS resources for a client
// of kind c: it must be load-balanced by the client (endpoints served
// through EDS). A wildcard host ("*.example.com") gets its clusters for
// Envoy, which routes to them by the host a request names, and nothing
// for gRPC, which dials one hostname. The error wraps ErrUnsupported and
// says why not.
func Translatable(svc *model.Service, c Client) error {
	switch {
	case svc.Hostname.IsWildcard() && c == GRPC:
		return fmt.Errorf("service %s: wildcard host, which a gRPC client cannot dial: %w", svc.Key(), ErrUnsupported)
	case svc.Resolution != model.ClientSideLB:
		return fmt.Errorf("service %s: resolution %s: %w", svc.Key(), svc.Resolution, ErrUnsupported)
	}
	return nil
}

// PortServed reports whether a service port gets xDS resources: every
// port but a UDP one, which sidecars do not proxy (Istio's CDS has no
// cluster for it either).
func PortServed(p model.Port) bool { return p.Protocol != model.UDP }

// ads is the config source that says "over the same ADS stream".
func ads() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

// Listener returns the API listener for one port of a service: an
// HttpConnectionManager that fetches the route configuration RouteName
// over ADS and ends in the router filter.
func Listener(host model.Hostname, port uint32) (*listenerv3.Listener, error) {
	name := ListenerName(host, port)
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, fmt.Errorf("listener %s: router filter: %w", name, err)
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		StatPrefix: name,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    ads(),
			RouteConfigName: RouteName(host, port),
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       wellknown.Router,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("listener %s: http connection manager: %w", name, err)
	}
	return &listenerv3.Listener{
		Name:        name,
		ApiListener: &listenerv3.ApiListener{ApiListener: hcm},
	}, nil
}

// RouteConfiguration returns the route configuration for one port of a
// service: one virtual host for the hostname, with and without the port,
// routing every request to the port's cluster.
func RouteConfiguration(host model.Hostname, port uint32) *routev3.RouteConfiguration {
	name := RouteName(host, port)
	return &routev3.RouteConfiguration{
		Name: name,
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    name,
			Domains: []string{string(host), ListenerName(host, port)},
			Routes: []*routev3.Route{{
				Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{
					ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: ClusterName(host, port)},
				}},
			}},
		}},
	}
}

// Cluster returns the EDS cluster for one port of a service, round robin,
// its endpoints fetched over ADS under the cluster's own name. Ports
// whose protocol is gRPC or HTTP/2 tell Envoy to speak HTTP/2 upstream.
func Cluster(host model.Hostname, p model.Port) (*clusterv3.Cluster, error) {
	name := ClusterName(host, p.Port)
	c := &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: ads(), ServiceName: name},
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
		ConnectTimeout:       durationpb.New(connectTimeout),
	}
	if p.Protocol == model.GRPC || p.Protocol == model.HTTP2 {
		opts, err := anypb.New(&httpv3.HttpProtocolOptions{
			UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
				ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
					ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
						Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
					},
				},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: protocol options: %w", name, err)
		}
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts,
		}
	}
	return c, nil
}
