package model

import "strings"

// Protocol is the application protocol of a service port, spelled as in the
// dump format.
type Protocol string

// Protocols. Unsupported means the registry could not tell: the data plane
// sniffs the protocol.
const (
	HTTP        Protocol = "HTTP"
	HTTP2       Protocol = "HTTP2"
	GRPC        Protocol = "GRPC"
	GRPCWeb     Protocol = "GRPC-Web"
	HTTPS       Protocol = "HTTPS"
	TLS         Protocol = "TLS"
	TCP         Protocol = "TCP"
	UDP         Protocol = "UDP"
	Mongo       Protocol = "Mongo"
	Redis       Protocol = "Redis"
	MySQL       Protocol = "MySQL"
	HTTPProxy   Protocol = "HTTP_PROXY"
	Unsupported Protocol = "UnsupportedProtocol"
)

// IsHTTP reports whether p carries HTTP (HTTP, HTTP2, GRPC, GRPC-Web).
func (p Protocol) IsHTTP() bool {
	switch p {
	case HTTP, HTTP2, GRPC, GRPCWeb:
		return true
	}
	return false
}

// ParseProtocol maps a protocol name to a Protocol, ignoring case: the
// protocol names of ServiceEntry ports and of Kubernetes appProtocol values
// ("http", "HTTP2", "grpc-web", "tls", ...). Anything else is Unsupported.
func ParseProtocol(name string) Protocol {
	switch strings.ToLower(name) {
	case "http":
		return HTTP
	case "http2":
		return HTTP2
	case "grpc":
		return GRPC
	case "grpc-web":
		return GRPCWeb
	case "https":
		return HTTPS
	case "tls":
		return TLS
	case "tcp":
		return TCP
	case "udp":
		return UDP
	case "mongo":
		return Mongo
	case "redis":
		return Redis
	case "mysql":
		return MySQL
	case "http_proxy":
		return HTTPProxy
	}
	return Unsupported
}

// Ports whose protocol must not be sniffed: an unnamed port with one of
// these numbers is TCP rather than Unsupported (SMTP, DNS, MySQL, MongoDB).
func isWellKnownPort(port uint32) bool {
	switch port {
	case 25, 53, 3306, 27017:
		return true
	}
	return false
}

// DetectProtocol decides a Kubernetes Service port's protocol the way Istio
// does:
//
//   - a port whose transport is UDP is UDP;
//   - when appProtocol is set it names the protocol and the port name is not
//     consulted; the Kubernetes standard values kubernetes.io/h2c,
//     kubernetes.io/ws and kubernetes.io/wss mean HTTP2, HTTP and HTTPS;
//   - otherwise the port name decides: a name starting with "grpc-web" is
//     GRPC-Web, else the part before the first '-' (or the whole name) is
//     parsed with ParseProtocol, ignoring case; a TCP port named "udp" is
//     TCP;
//   - what remains Unsupported (sniffed by the data plane) becomes TCP on
//     the well-known ports 25, 53, 3306 and 27017, where sniffing breaks
//     server-first protocols.
func DetectProtocol(port uint32, portName, appProtocol string, udp bool) Protocol {
	if udp {
		return UDP
	}
	name := portName
	if appProtocol != "" {
		switch appProtocol {
		case "kubernetes.io/h2c":
			return HTTP2
		case "kubernetes.io/ws":
			return HTTP
		case "kubernetes.io/wss":
			return HTTPS
		}
		name = appProtocol
	}
	p := Unsupported
	if len(name) >= len("grpc-web") && strings.EqualFold(name[:len("grpc-web")], "grpc-web") {
		p = GRPCWeb
	} else {
		if i := strings.IndexByte(name, '-'); i >= 0 {
			name = name[:i]
		}
		if p = ParseProtocol(name); p == UDP {
			p = TCP // the transport says TCP, whatever the name says
		}
	}
	if p == Unsupported && isWellKnownPort(port) {
		return TCP
	}
	return p
}
