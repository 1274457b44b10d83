package model_test

import (
	"testing"

	"github.com/meshreg/meshreg/model"
)

// The cases follow how Kubernetes Services and Istio name their ports: the
// port-name prefixes of Istio's protocol selection, the appProtocol values
// of the Kubernetes API (including the kubernetes.io/* standard names), and
// Istio's well-known server-first ports.
func TestDetectProtocol(t *testing.T) {
	tests := []struct {
		name        string
		port        uint32
		portName    string
		appProtocol string
		udp         bool
		want        model.Protocol
	}{
		// Port name prefixes.
		{"http", 80, "http", "", false, model.HTTP},
		{"http with suffix", 9080, "http-foo", "", false, model.HTTP},
		{"name ignores case", 80, "HTTP", "", false, model.HTTP},
		{"http2", 80, "http2", "", false, model.HTTP2},
		{"HTTP2 upper case", 80, "HTTP2", "", false, model.HTTP2},
		{"http2 with suffix", 80, "http2-api", "", false, model.HTTP2},
		{"grpc", 9090, "grpc", "", false, model.GRPC},
		{"grpc with suffix", 9090, "grpc-backend", "", false, model.GRPC},
		{"grpc with empty suffix", 9090, "grpc-", "", false, model.GRPC},
		{"grpc-web", 8080, "grpc-web", "", false, model.GRPCWeb},
		{"grpc-web with suffix", 8080, "grpc-web-ui", "", false, model.GRPCWeb},
		{"grpc-web mixed case", 8080, "GRPC-Web", "", false, model.GRPCWeb},
		{"grpcweb without dash is unknown", 8080, "grpcweb", "", false, model.Unsupported},
		{"https", 443, "https", "", false, model.HTTPS},
		{"https with suffix", 8443, "https-admin", "", false, model.HTTPS},
		{"tls", 443, "tls", "", false, model.TLS},
		{"tcp", 5432, "tcp", "", false, model.TCP},
		{"tcp with suffix", 5432, "tcp-postgres", "", false, model.TCP},
		{"mongo", 27017, "mongo", "", false, model.Mongo},
		{"redis", 6379, "redis", "", false, model.Redis},
		{"mysql", 3306, "mysql", "", false, model.MySQL},
		{"http_proxy", 3128, "http_proxy", "", false, model.HTTPProxy},
		{"prefix must be whole", 8080, "httpfoo", "", false, model.Unsupported},
		{"leading dash", 8080, "-http", "", false, model.Unsupported},
		{"unknown name", 8080, "metrics", "", false, model.Unsupported},
		{"unnamed", 8080, "", "", false, model.Unsupported},

		// Transport.
		{"UDP transport", 53, "dns", "", true, model.UDP},
		{"UDP transport unnamed", 5000, "", "", true, model.UDP},
		{"UDP transport beats http name", 8080, "http", "", true, model.UDP},
		{"UDP transport beats appProtocol", 8080, "", "kubernetes.io/h2c", true, model.UDP},
		{"TCP port named udp", 5000, "udp", "", false, model.TCP},
		{"TCP port named udp with suffix", 5000, "udp-stats", "", false, model.TCP},

		// appProtocol.
		{"appProtocol kubernetes.io/h2c", 8080, "", "kubernetes.io/h2c", false, model.HTTP2},
		{"appProtocol kubernetes.io/ws", 8080, "", "kubernetes.io/ws", false, model.HTTP},
		{"appProtocol kubernetes.io/wss", 8443, "", "kubernetes.io/wss", false, model.HTTPS},
		{"appProtocol overrides name", 8080, "tcp", "http", false, model.HTTP},
		{"appProtocol tcp overrides http name", 8080, "http-web", "tcp", false, model.TCP},
		{"appProtocol mysql", 8080, "http", "mysql", false, model.MySQL},
		{"appProtocol upper case", 8080, "", "HTTP2", false, model.HTTP2},
		{"appProtocol grpc", 8080, "", "grpc", false, model.GRPC},
		{"appProtocol grpc-web", 8080, "", "grpc-web", false, model.GRPCWeb},
		{"appProtocol unknown, name not consulted", 8080, "http", "example.com/custom", false, model.Unsupported},
		{"appProtocol udp on TCP port", 8080, "", "udp", false, model.TCP},

		// Well-known server-first ports.
		{"SMTP unnamed", 25, "", "", false, model.TCP},
		{"DNS over TCP unnamed", 53, "", "", false, model.TCP},
		{"MySQL unnamed", 3306, "", "", false, model.TCP},
		{"MongoDB unnamed", 27017, "", "", false, model.TCP},
		{"well-known port with unknown name", 25, "smtp", "", false, model.TCP},
		{"well-known port with unknown appProtocol", 53, "", "example.com/dns", false, model.TCP},
		{"name beats well-known port", 3306, "http", "", false, model.HTTP},
		{"other port unnamed stays unknown", 5432, "", "", false, model.Unsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := model.DetectProtocol(tt.port, tt.portName, tt.appProtocol, tt.udp)
			if got != tt.want {
				t.Errorf("DetectProtocol(%d, %q, %q, udp=%v) = %s, want %s",
					tt.port, tt.portName, tt.appProtocol, tt.udp, got, tt.want)
			}
		})
	}
}

// allProtocols is every Protocol constant, in the order of the dump format.
var allProtocols = []model.Protocol{
	model.HTTP, model.HTTP2, model.GRPC, model.GRPCWeb, model.HTTPS, model.TLS, model.TCP,
	model.UDP, model.Mongo, model.Redis, model.MySQL, model.HTTPProxy, model.Unsupported,
}

func TestProtocolDumpWords(t *testing.T) {
	want := []string{"HTTP", "HTTP2", "GRPC", "GRPC-Web", "HTTPS", "TLS", "TCP", "UDP",
		"Mongo", "Redis", "MySQL", "HTTP_PROXY", "UnsupportedProtocol"}
	for i, p := range allProtocols {
		if string(p) != want[i] {
			t.Errorf("protocol %d is %q, want the dump word %q", i, p, want[i])
		}
	}
}

func TestParseProtocol(t *testing.T) {
	// Every protocol parses back from its own spelling, in any case.
	for _, p := range allProtocols {
		if got := model.ParseProtocol(string(p)); got != p {
			t.Errorf("ParseProtocol(%q) = %s, want %s", p, got, p)
		}
	}
	tests := []struct {
		in   string
		want model.Protocol
	}{
		{"http", model.HTTP},
		{"Http2", model.HTTP2},
		{"grpc-web", model.GRPCWeb},
		{"tls", model.TLS},
		{"mongo", model.Mongo},
		{"http_proxy", model.HTTPProxy},
		{"http-foo", model.Unsupported}, // no prefix matching here
		{"", model.Unsupported},
		{"sctp", model.Unsupported},
	}
	for _, tt := range tests {
		if got := model.ParseProtocol(tt.in); got != tt.want {
			t.Errorf("ParseProtocol(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestProtocolIsHTTP(t *testing.T) {
	http := map[model.Protocol]bool{model.HTTP: true, model.HTTP2: true, model.GRPC: true, model.GRPCWeb: true}
	for _, p := range allProtocols {
		if got := p.IsHTTP(); got != http[p] {
			t.Errorf("%s.IsHTTP() = %v, want %v", p, got, http[p])
		}
	}
}
