package workloadapi_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshreg/meshreg/address/workloadapi"
)

// The tables below are the wire facts of Istio's
// pkg/workloadapi/workload.proto (istio/istio master at 86c9f01fd735,
// 2026-08-22), written down by hand from that file. A failure here means
// workload.proto drifted from what ztunnel decodes: fix the .proto, not
// the table, unless Istio changed the field upstream.

// wireField is one field as it appears on the wire and in the schema.
type wireField struct {
	name   protoreflect.Name
	number protoreflect.FieldNumber
	kind   protoreflect.Kind
	// card is "", "repeated", "map" or "optional" (proto3 explicit presence).
	card string
	// typ is the full name of a message or enum field's type (for a map,
	// of its value); empty for scalars.
	typ protoreflect.FullName
	// oneof is the name of the oneof the field belongs to, if any.
	oneof protoreflect.Name
}

const (
	str   = protoreflect.StringKind
	byt   = protoreflect.BytesKind
	u32   = protoreflect.Uint32Kind
	boo   = protoreflect.BoolKind
	msg   = protoreflect.MessageKind
	enm   = protoreflect.EnumKind
	pkg   = "istio.workload."
	wkt   = "google.protobuf."
	rep   = "repeated"
	mapOf = "map"
)

var wireMessages = []struct {
	m      proto.Message
	full   protoreflect.FullName
	fields []wireField
}{
	{&workloadapi.Address{}, pkg + "Address", []wireField{
		{"workload", 1, msg, "", pkg + "Workload", "type"},
		{"service", 2, msg, "", pkg + "Service", "type"},
	}},
	{&workloadapi.Service{}, pkg + "Service", []wireField{
		{"name", 1, str, "", "", ""},
		{"namespace", 2, str, "", "", ""},
		{"hostname", 3, str, "", "", ""},
		{"addresses", 4, msg, rep, pkg + "NetworkAddress", ""},
		{"ports", 5, msg, rep, pkg + "Port", ""},
		{"subject_alt_names", 6, str, rep, "", ""},
		{"waypoint", 7, msg, "", pkg + "GatewayAddress", ""},
		{"load_balancing", 8, msg, "", pkg + "LoadBalancing", ""},
		{"ip_families", 9, enm, "", pkg + "IPFamilies", ""},
		{"extensions", 10, msg, rep, pkg + "Extension", ""},
		{"canonical", 11, boo, "", "", ""},
		{"ingress_use_waypoint", 12, boo, "", "", ""},
		{"weighted_waypoints", 13, msg, rep, pkg + "WeightedWaypoint", ""},
		{"visibility", 14, enm, "", pkg + "Service.Visibility", ""},
	}},
	{&workloadapi.Workload{}, pkg + "Workload", []wireField{
		{"uid", 20, str, "", "", ""},
		{"name", 1, str, "", "", ""},
		{"namespace", 2, str, "", "", ""},
		{"addresses", 3, byt, rep, "", ""},
		{"hostname", 21, str, "", "", ""},
		{"network", 4, str, "", "", ""},
		{"tunnel_protocol", 5, enm, "", pkg + "TunnelProtocol", ""},
		{"trust_domain", 6, str, "", "", ""},
		{"service_account", 7, str, "", "", ""},
		{"waypoint", 8, msg, "", pkg + "GatewayAddress", ""},
		{"network_gateway", 19, msg, "", pkg + "GatewayAddress", ""},
		{"node", 9, str, "", "", ""},
		{"canonical_name", 10, str, "", "", ""},
		{"canonical_revision", 11, str, "", "", ""},
		{"workload_type", 12, enm, "", pkg + "WorkloadType", ""},
		{"workload_name", 13, str, "", "", ""},
		{"native_tunnel", 14, boo, "", "", ""},
		{"application_tunnel", 23, msg, "", pkg + "ApplicationTunnel", ""},
		{"services", 22, msg, mapOf, pkg + "PortList", ""},
		{"authorization_policies", 16, str, rep, "", ""},
		{"status", 17, enm, "", pkg + "WorkloadStatus", ""},
		{"cluster_id", 18, str, "", "", ""},
		{"locality", 24, msg, "", pkg + "Locality", ""},
		{"network_mode", 25, enm, "", pkg + "NetworkMode", ""},
		{"extensions", 26, msg, rep, pkg + "Extension", ""},
		{"capacity", 27, msg, "", wkt + "UInt32Value", ""},
	}},
	{&workloadapi.GatewayAddress{}, pkg + "GatewayAddress", []wireField{
		{"hostname", 1, msg, "", pkg + "NamespacedHostname", "destination"},
		{"address", 2, msg, "", pkg + "NetworkAddress", "destination"},
		{"hbone_mtls_port", 3, u32, "", "", ""},
	}},
	{&workloadapi.NetworkAddress{}, pkg + "NetworkAddress", []wireField{
		{"network", 1, str, "", "", ""},
		{"address", 2, byt, "", "", ""},
		{"length", 3, u32, "optional", "", "_length"},
	}},
	{&workloadapi.Port{}, pkg + "Port", []wireField{
		{"service_port", 1, u32, "", "", ""},
		{"target_port", 2, u32, "", "", ""},
		{"app_protocol", 3, enm, "", pkg + "AppProtocol", ""},
	}},
	{&workloadapi.LoadBalancing{}, pkg + "LoadBalancing", []wireField{
		{"routing_preference", 1, enm, rep, pkg + "LoadBalancing.Scope", ""},
		{"mode", 2, enm, "", pkg + "LoadBalancing.Mode", ""},
		{"health_policy", 3, enm, "", pkg + "LoadBalancing.HealthPolicy", ""},
	}},
	{&workloadapi.PortList{}, pkg + "PortList", []wireField{
		{"ports", 1, msg, rep, pkg + "Port", ""},
	}},
	{&workloadapi.Locality{}, pkg + "Locality", []wireField{
		{"region", 1, str, "", "", ""},
		{"zone", 2, str, "", "", ""},
		{"subzone", 3, str, "", "", ""},
	}},
	{&workloadapi.NamespacedHostname{}, pkg + "NamespacedHostname", []wireField{
		{"namespace", 1, str, "", "", ""},
		{"hostname", 2, str, "", "", ""},
	}},
	{&workloadapi.ApplicationTunnel{}, pkg + "ApplicationTunnel", []wireField{
		{"protocol", 1, enm, "", pkg + "ApplicationTunnel.Protocol", ""},
		{"port", 2, u32, "", "", ""},
	}},
	{&workloadapi.WeightedWaypoint{}, pkg + "WeightedWaypoint", []wireField{
		{"destination", 1, msg, "", pkg + "GatewayAddress", ""},
		{"weight", 2, u32, "", "", ""},
	}},
	{&workloadapi.Extension{}, pkg + "Extension", []wireField{
		{"name", 1, str, "", "", ""},
		{"config", 2, msg, "", wkt + "Any", ""},
	}},
}

func cardinality(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return mapOf
	case fd.IsList():
		return rep
	case fd.HasOptionalKeyword():
		return "optional"
	}
	return ""
}

func typeName(fd protoreflect.FieldDescriptor) protoreflect.FullName {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	switch {
	case fd.Message() != nil:
		return fd.Message().FullName()
	case fd.Enum() != nil:
		return fd.Enum().FullName()
	}
	return ""
}

func TestWireMessages(t *testing.T) {
	for _, want := range wireMessages {
		md := want.m.ProtoReflect().Descriptor()
		t.Run(string(want.full), func(t *testing.T) {
			if md.FullName() != want.full {
				t.Fatalf("full name = %s, want %s", md.FullName(), want.full)
			}
			if got := md.Fields().Len(); got != len(want.fields) {
				t.Errorf("%d fields, want %d", got, len(want.fields))
			}
			for _, wf := range want.fields {
				fd := md.Fields().ByName(wf.name)
				if fd == nil {
					t.Errorf("field %s missing", wf.name)
					continue
				}
				if fd.Number() != wf.number {
					t.Errorf("%s: number %d, want %d", wf.name, fd.Number(), wf.number)
				}
				if fd.Kind() != wf.kind {
					t.Errorf("%s: kind %v, want %v", wf.name, fd.Kind(), wf.kind)
				}
				if got := cardinality(fd); got != wf.card {
					t.Errorf("%s: cardinality %q, want %q", wf.name, got, wf.card)
				}
				if got := typeName(fd); got != wf.typ {
					t.Errorf("%s: type %q, want %q", wf.name, got, wf.typ)
				}
				var oneof protoreflect.Name
				if od := fd.ContainingOneof(); od != nil {
					oneof = od.Name()
				}
				if oneof != wf.oneof {
					t.Errorf("%s: oneof %q, want %q", wf.name, oneof, wf.oneof)
				}
			}
		})
	}
}

// wireEnums are the enums' full names and values, by number.
var wireEnums = []struct {
	e      protoreflect.Enum
	full   protoreflect.FullName
	values []protoreflect.Name
}{
	{workloadapi.IPFamilies(0), pkg + "IPFamilies", []protoreflect.Name{"AUTOMATIC", "IPV4_ONLY", "IPV6_ONLY", "DUAL"}},
	{workloadapi.NetworkMode(0), pkg + "NetworkMode", []protoreflect.Name{"STANDARD", "HOST_NETWORK"}},
	{workloadapi.WorkloadStatus(0), pkg + "WorkloadStatus", []protoreflect.Name{"HEALTHY", "UNHEALTHY"}},
	{workloadapi.WorkloadType(0), pkg + "WorkloadType", []protoreflect.Name{"DEPLOYMENT", "CRONJOB", "POD", "JOB"}},
	{workloadapi.AppProtocol(0), pkg + "AppProtocol", []protoreflect.Name{"UNKNOWN", "HTTP11", "HTTP2", "GRPC", "TCP", "TLS"}},
	{workloadapi.TunnelProtocol(0), pkg + "TunnelProtocol", []protoreflect.Name{"NONE", "HBONE", "LEGACY_ISTIO_MTLS"}},
	{workloadapi.Service_Visibility(0), pkg + "Service.Visibility", []protoreflect.Name{"PUBLIC", "NAMESPACE"}},
	{workloadapi.LoadBalancing_Scope(0), pkg + "LoadBalancing.Scope", []protoreflect.Name{"UNSPECIFIED_SCOPE", "REGION", "ZONE", "SUBZONE", "NODE", "CLUSTER", "NETWORK"}},
	{workloadapi.LoadBalancing_Mode(0), pkg + "LoadBalancing.Mode", []protoreflect.Name{"UNSPECIFIED_MODE", "STRICT", "FAILOVER", "PASSTHROUGH"}},
	{workloadapi.LoadBalancing_HealthPolicy(0), pkg + "LoadBalancing.HealthPolicy", []protoreflect.Name{"ONLY_HEALTHY", "ALLOW_ALL"}},
	{workloadapi.ApplicationTunnel_Protocol(0), pkg + "ApplicationTunnel.Protocol", []protoreflect.Name{"NONE", "PROXY"}},
}

func TestWireEnums(t *testing.T) {
	for _, want := range wireEnums {
		ed := want.e.Descriptor()
		t.Run(string(want.full), func(t *testing.T) {
			if ed.FullName() != want.full {
				t.Fatalf("full name = %s, want %s", ed.FullName(), want.full)
			}
			if got := ed.Values().Len(); got != len(want.values) {
				t.Errorf("%d values, want %d", got, len(want.values))
			}
			for n, name := range want.values {
				vd := ed.Values().ByNumber(protoreflect.EnumNumber(n))
				if vd == nil || vd.Name() != name {
					t.Errorf("value %d is %v, want %s", n, vd, name)
				}
			}
		})
	}
}

// TestWireFile pins the proto package, the imports, and the reserved
// numbers and names that must never be reused.
func TestWireFile(t *testing.T) {
	fd := (&workloadapi.Address{}).ProtoReflect().Descriptor().ParentFile()
	if fd.Package() != "istio.workload" {
		t.Errorf("package %s, want istio.workload", fd.Package())
	}
	if fd.Syntax() != protoreflect.Proto3 {
		t.Errorf("syntax %v, want proto3", fd.Syntax())
	}
	imports := map[string]bool{}
	for i := range fd.Imports().Len() {
		imports[fd.Imports().Get(i).Path()] = true
	}
	for _, p := range []string{"google/protobuf/wrappers.proto", "google/protobuf/any.proto"} {
		if !imports[p] {
			t.Errorf("does not import %s", p)
		}
	}
	if n := len(imports); n != 2 {
		t.Errorf("%d imports, want 2", n)
	}
	if got, want := fd.Messages().Len(), len(wireMessages); got != want {
		t.Errorf("%d messages in the file, want %d", got, want)
	}
	if got, want := fd.Enums().Len(), 6; got != want {
		t.Errorf("%d top-level enums in the file, want %d", got, want)
	}

	w := (&workloadapi.Workload{}).ProtoReflect().Descriptor()
	if !w.ReservedRanges().Has(15) {
		t.Error("Workload does not reserve field 15")
	}
	g := (&workloadapi.GatewayAddress{}).ProtoReflect().Descriptor()
	if !g.ReservedRanges().Has(4) || !g.ReservedNames().Has("hbone_single_tls_port") {
		t.Error("GatewayAddress does not reserve field 4 and the name hbone_single_tls_port")
	}

	const typeURL = "type.googleapis.com/istio.workload.Address"
	a, err := anypb.New(&workloadapi.Address{})
	if err != nil {
		t.Fatal(err)
	}
	if a.GetTypeUrl() != typeURL {
		t.Errorf("type URL %s, want %s", a.GetTypeUrl(), typeURL)
	}
}
