package xds

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
)

// The node metadata keys ProxyFromNode reads: those of Istio's bootstrap
// (the fields of node.metadata an istio-agent writes for Envoy and for
// proxyless gRPC).
const (
	// MetadataNamespace is the proxy's namespace (a string): it decides
	// which services the proxy sees (exportTo).
	MetadataNamespace = "NAMESPACE"
	// MetadataClusterID is the proxy's cluster (a string).
	MetadataClusterID = "CLUSTER_ID"
	// MetadataNetwork is the proxy's network (a string).
	MetadataNetwork = "NETWORK"
	// MetadataInstanceIPs are the proxy's IPs, primary first, as one
	// comma-separated string (Istio's StringList).
	MetadataInstanceIPs = "INSTANCE_IPS"
	// MetadataLabels are the proxy's workload labels, a struct of
	// strings.
	MetadataLabels = "LABELS"
	// MetadataNodeName is the Kubernetes node the proxy runs on (a
	// string).
	MetadataNodeName = "NODE_NAME"
	// MetadataDNSCapture says whether the proxy captures DNS: the string
	// "true" or "false" (Istio's StringBool); a JSON boolean is taken
	// too.
	MetadataDNSCapture = "DNS_CAPTURE"
)

// Client is the kind of xDS client a node is, which decides what it can
// be sent.
type Client int

const (
	// Envoy is a sidecar: Istio's default kind of proxy, and what a node
	// is unless it says it is gRPC. It is sent wildcard hosts' clusters
	// and unix domain socket endpoints.
	Envoy Client = iota
	// GRPC is a proxyless gRPC client, which dials one hostname over
	// TCP: it is sent neither.
	GRPC
)

// MetadataGenerator is the node metadata key with which Istio's gRPC
// bootstrap asks for gRPC's resources: the value "grpc".
const MetadataGenerator = "GENERATOR"

// ClientOf returns the kind of client a node is: GRPC when its
// user_agent_name is a gRPC library's ("gRPC Go", "gRPC Java"...) or its
// metadata GENERATOR is "grpc", as Istio's gRPC bootstrap writes it;
// Envoy otherwise.
func ClientOf(n *corev3.Node) Client {
	if strings.HasPrefix(strings.ToLower(n.GetUserAgentName()), "grpc") {
		return GRPC
	}
	if v, ok := n.GetMetadata().GetFields()[MetadataGenerator]; ok && v.GetStringValue() == "grpc" {
		return GRPC
	}
	return Envoy
}

// ErrInvalidNode is wrapped by the errors of ProxyFromNode.
var ErrInvalidNode = errors.New("invalid xDS node")

// ProxyFromNode returns the proxy an xDS node describes: its metadata
// (the Metadata* keys; others are ignored, absent ones leave their field
// unset) and its locality. The node must have an id, since its resources
// are kept by id. A value of the wrong kind, or an entry of INSTANCE_IPS
// that is not an IP address, is an error that names the node, the key and
// the value, and wraps ErrInvalidNode.
func ProxyFromNode(n *corev3.Node) (proxyview.Proxy, error) {
	var p proxyview.Proxy
	if n == nil {
		return p, fmt.Errorf("%w: the stream's first request has no node", ErrInvalidNode)
	}
	if n.GetId() == "" {
		return p, fmt.Errorf("%w: node without an id", ErrInvalidNode)
	}
	md := metadata{id: n.GetId(), fields: n.GetMetadata().GetFields()}
	var cluster, network, ips string
	for _, f := range []struct {
		key string
		dst *string
	}{
		{MetadataNamespace, &p.Namespace},
		{MetadataClusterID, &cluster},
		{MetadataNetwork, &network},
		{MetadataInstanceIPs, &ips},
		{MetadataNodeName, &p.NodeName},
	} {
		s, err := md.str(f.key)
		if err != nil {
			return proxyview.Proxy{}, err
		}
		*f.dst = s
	}
	p.Cluster, p.Network = model.ClusterID(cluster), model.NetworkID(network)
	for part := range strings.SplitSeq(ips, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		ip, err := netip.ParseAddr(part)
		if err != nil {
			return proxyview.Proxy{}, md.errorf(MetadataInstanceIPs, "%q is not an IP address", part)
		}
		p.IPs = append(p.IPs, ip)
	}
	labels, err := md.labels()
	if err != nil {
		return proxyview.Proxy{}, err
	}
	p.Labels = labels
	if v, ok := md.fields[MetadataDNSCapture]; ok {
		switch k := v.GetKind().(type) {
		case *structpb.Value_BoolValue:
			p.DNSCapture = k.BoolValue
		case *structpb.Value_StringValue:
			b, err := strconv.ParseBool(k.StringValue)
			if err != nil {
				return proxyview.Proxy{}, md.errorf(MetadataDNSCapture, "%q is not \"true\" or \"false\"", k.StringValue)
			}
			p.DNSCapture = b
		case *structpb.Value_NullValue:
		default:
			return proxyview.Proxy{}, md.errorf(MetadataDNSCapture, "%s, want a string", kindName(v))
		}
	}
	if l := n.GetLocality(); l != nil {
		p.Locality = model.Locality{Region: l.GetRegion(), Zone: l.GetZone(), Subzone: l.GetSubZone()}
	}
	return p, nil
}

// metadata reads one node's metadata fields.
type metadata struct {
	id     string
	fields map[string]*structpb.Value
}

func (m metadata) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%w: node %q: metadata %s: %s", ErrInvalidNode, m.id, key, fmt.Sprintf(format, args...))
}

// str returns a string field; "" when absent or null.
func (m metadata) str(key string) (string, error) {
	v, ok := m.fields[key]
	if !ok {
		return "", nil
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue, nil
	case *structpb.Value_NullValue:
		return "", nil
	}
	return "", m.errorf(key, "%s, want a string", kindName(v))
}

// labels returns the LABELS struct; nil when absent or null.
func (m metadata) labels() (map[string]string, error) {
	v, ok := m.fields[MetadataLabels]
	if !ok {
		return nil, nil
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return nil, nil
	case *structpb.Value_StructValue:
		out := make(map[string]string, len(k.StructValue.GetFields()))
		for name, lv := range k.StructValue.GetFields() {
			s, ok := lv.GetKind().(*structpb.Value_StringValue)
			if !ok {
				return nil, m.errorf(MetadataLabels, "label %q is %s, want a string", name, kindName(lv))
			}
			out[name] = s.StringValue
		}
		return out, nil
	}
	return nil, m.errorf(MetadataLabels, "%s, want a struct of strings", kindName(v))
}

// kindName names a value's kind for an error: "a number", "a list".
func kindName(v *structpb.Value) string {
	switch v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return "a number"
	case *structpb.Value_StringValue:
		return "a string"
	case *structpb.Value_BoolValue:
		return "a boolean"
	case *structpb.Value_StructValue:
		return "a struct"
	case *structpb.Value_ListValue:
		return "a list"
	case *structpb.Value_NullValue:
		return "null"
	}
	return "empty"
}

// String returns "envoy" or "grpc", the client label of the server's
// metrics.
func (c Client) String() string {
	if c == GRPC {
		return "grpc"
	}
	return "envoy"
}
