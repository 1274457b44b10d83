package xds

import (
	"net"
	"strconv"

	"github.com/meshreg/meshreg/model"
)

// ClusterName returns the name of the cluster, and of its load assignment,
// for one port of a service: "outbound|<port>||<hostname>", as Istio names
// it.
func ClusterName(host model.Hostname, port uint32) string {
	return "outbound|" + strconv.FormatUint(uint64(port), 10) + "||" + string(host)
}

// ListenerName returns the name of the API listener for one port of a
// service: "<hostname>:<port>", the resource a gRPC client dialling
// "xds:///<hostname>:<port>" requests.
func ListenerName(host model.Hostname, port uint32) string {
	return net.JoinHostPort(string(host), strconv.FormatUint(uint64(port), 10))
}

// RouteName returns the name of the route configuration the listener for
// one port of a service refers to; the same as the listener's name.
func RouteName(host model.Hostname, port uint32) string { return ListenerName(host, port) }
