package main

// Rendering of the index as the oracle's JSON document:
//
//	{"workloads": [...], "services": [...]}
//
// Each element is the istio.workload.Workload / Service message as protojson prints it
// (default options), decoded into map[string]any so encoding/json sorts the keys; then
// IP addresses held as bytes (Workload.addresses and every NetworkAddress.address) are
// rewritten from base64 to their text form.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"istio.io/istio/pilot/pkg/serviceregistry/ambient"
	"istio.io/istio/pkg/workloadapi"
)

type document struct {
	Workloads []map[string]any `json:"workloads"`
	Services  []map[string]any `json:"services"`
}

func render(idx ambient.Index) ([]byte, error) {
	var wls []*workloadapi.Workload
	var svcs []*workloadapi.Service
	for _, a := range idx.All() {
		if a.Address == nil {
			continue
		}
		if wl := a.GetWorkload(); wl != nil {
			wls = append(wls, wl)
		}
		if s := a.GetService(); s != nil {
			svcs = append(svcs, s)
		}
	}
	sort.Slice(wls, func(i, j int) bool { return wls[i].GetUid() < wls[j].GetUid() })
	sort.Slice(svcs, func(i, j int) bool {
		a, b := svcs[i], svcs[j]
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetHostname() < b.GetHostname()
	})
	doc := document{Workloads: []map[string]any{}, Services: []map[string]any{}}
	for _, wl := range wls {
		m, err := toMap(wl)
		if err != nil {
			return nil, err
		}
		doc.Workloads = append(doc.Workloads, m)
	}
	for _, s := range svcs {
		m, err := toMap(s)
		if err != nil {
			return nil, err
		}
		doc.Services = append(doc.Services, m)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func toMap(msg proto.Message) (map[string]any, error) {
	js, err := protojson.Marshal(msg)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	if err := rewriteIPs(msg.ProtoReflect().Descriptor(), m); err != nil {
		return nil, err
	}
	return m, nil
}

const (
	workloadMessage       = protoreflect.FullName("istio.workload.Workload")
	networkAddressMessage = protoreflect.FullName("istio.workload.NetworkAddress")
)

// rewriteIPs walks the JSON form of a message of type md alongside its descriptor and
// replaces the base64 text of Workload.addresses[] and NetworkAddress.address by the IP's
// text form. Nothing else is changed.
func rewriteIPs(md protoreflect.MessageDescriptor, m map[string]any) error {
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		v, ok := m[fd.JSONName()]
		if !ok {
			continue
		}
		isIP := fd.Kind() == protoreflect.BytesKind &&
			((md.FullName() == workloadMessage && fd.Name() == "addresses") ||
				(md.FullName() == networkAddressMessage && fd.Name() == "address"))
		switch {
		case isIP && fd.IsList():
			list, _ := v.([]any)
			for j, e := range list {
				s, err := ipText(e)
				if err != nil {
					return fmt.Errorf("%s.%s: %v", md.FullName(), fd.Name(), err)
				}
				list[j] = s
			}
		case isIP:
			s, err := ipText(v)
			if err != nil {
				return fmt.Errorf("%s.%s: %v", md.FullName(), fd.Name(), err)
			}
			m[fd.JSONName()] = s
		case fd.IsMap() && fd.MapValue().Kind() == protoreflect.MessageKind:
			mm, _ := v.(map[string]any)
			for _, e := range mm {
				if sub, ok := e.(map[string]any); ok {
					if err := rewriteIPs(fd.MapValue().Message(), sub); err != nil {
						return err
					}
				}
			}
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			list, _ := v.([]any)
			for _, e := range list {
				if sub, ok := e.(map[string]any); ok {
					if err := rewriteIPs(fd.Message(), sub); err != nil {
						return err
					}
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if sub, ok := v.(map[string]any); ok {
				if err := rewriteIPs(fd.Message(), sub); err != nil {
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
		return "", fmt.Errorf("bytes field is %T, not a string", v)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", err
	}
	ip, ok := netip.AddrFromSlice(b)
	if !ok {
		// not 4 or 16 bytes: not an IP; left as protojson printed it
		return s, nil
	}
	return ip.String(), nil
}
