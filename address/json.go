package address

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// WriteJSON writes a snapshot's workloads and services as one JSON
// document, {"workloads": [...], "services": [...]}: workloads sorted by
// uid, services by namespace and hostname, each as protojson writes it
// with its keys sorted, and IP addresses (Workload.addresses,
// NetworkAddress.address) as text rather than base64. It is the form
// the ambient oracle (hack/ambient-oracle) prints Istio's index in.
func WriteJSON(w io.Writer, s *Snapshot) error {
	doc := struct {
		Workloads []map[string]any `json:"workloads"`
		Services  []map[string]any `json:"services"`
	}{Workloads: []map[string]any{}, Services: []map[string]any{}}
	for _, wl := range s.Workloads() {
		m, err := jsonMap(wl)
		if err != nil {
			return err
		}
		doc.Workloads = append(doc.Workloads, m)
	}
	for _, svc := range s.Services() {
		m, err := jsonMap(svc)
		if err != nil {
			return err
		}
		doc.Services = append(doc.Services, m)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

func jsonMap(msg proto.Message) (map[string]any, error) {
	js, err := protojson.Marshal(msg)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	return m, ipsAsText(msg.ProtoReflect().Descriptor(), m)
}

// ipsAsText walks the JSON form of a message alongside its descriptor and
// writes the IPs it holds as bytes as text.
func ipsAsText(md protoreflect.MessageDescriptor, m map[string]any) error {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		v, ok := m[fd.JSONName()]
		if !ok {
			continue
		}
		ip := fd.Kind() == protoreflect.BytesKind &&
			(md.FullName() == "istio.workload.Workload" && fd.Name() == "addresses" ||
				md.FullName() == "istio.workload.NetworkAddress" && fd.Name() == "address")
		switch {
		case ip && fd.IsList():
			list, _ := v.([]any)
			for j, e := range list {
				t, err := ipText(e)
				if err != nil {
					return err
				}
				list[j] = t
			}
		case ip:
			t, err := ipText(v)
			if err != nil {
				return err
			}
			m[fd.JSONName()] = t
		case fd.Kind() == protoreflect.MessageKind && fd.IsMap():
			if fd.MapValue().Kind() != protoreflect.MessageKind {
				continue
			}
			entries, _ := v.(map[string]any)
			for _, e := range entries {
				if em, ok := e.(map[string]any); ok {
					if err := ipsAsText(fd.MapValue().Message(), em); err != nil {
						return err
					}
				}
			}
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			list, _ := v.([]any)
			for _, e := range list {
				if em, ok := e.(map[string]any); ok {
					if err := ipsAsText(fd.Message(), em); err != nil {
						return err
					}
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if em, ok := v.(map[string]any); ok {
				if err := ipsAsText(fd.Message(), em); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func ipText(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("address: IP field holds %T", v)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", err
	}
	ip, ok := netip.AddrFromSlice(b)
	if !ok {
		return "", fmt.Errorf("address: %d bytes are not an IP", len(b))
	}
	return ip.String(), nil
}
