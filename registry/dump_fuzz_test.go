package registry_test

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
)

// fuzzState builds registry contents from fuzz input: up to three
// services with ports, VIPs and endpoints, workloads and diagnostics.
// Strings are split on "|" to make lists; anything that does not parse as
// an address is kept as a hostname, as the builders do.
type fuzzState struct {
	services  []*model.Service
	endpoints map[model.ServiceKey][]*model.Endpoint
	workloads []*model.WorkloadInstance
	diags     []model.Diagnostic
}

func buildFuzzState(hosts, namespace, ports, addrs, labelKV, exportTo, text string, port uint32, enums uint8) fuzzState {
	st := fuzzState{endpoints: map[model.ServiceKey][]*model.Endpoint{}}
	labels := map[string]string{}
	for kv := range strings.SplitSeq(labelKV, "|") {
		k, v, _ := strings.Cut(kv, "=")
		labels[k] = v
	}
	addrList := strings.Split(addrs, "|")
	var ips []netip.Addr
	var prefixes []netip.Prefix
	for _, a := range addrList {
		if ip, err := netip.ParseAddr(a); err == nil {
			ips = append(ips, ip)
			prefixes = append(prefixes, netip.PrefixFrom(ip, ip.BitLen()))
		} else if p, err := netip.ParsePrefix(a); err == nil {
			prefixes = append(prefixes, p)
		}
	}
	hostList := strings.Split(hosts, "|")
	if len(hostList) > 3 {
		hostList = hostList[:3]
	}
	for i, h := range hostList {
		svc := &model.Service{
			Hostname: model.Hostname(h), Namespace: namespace, Name: h,
			Provider:     model.Provider(1 + (enums+uint8(i))%2),
			Resolution:   model.Resolution(enums % 6),
			MeshExternal: enums&8 != 0,
			Addresses:    map[model.ClusterID][]netip.Prefix{model.ClusterID(text): prefixes},
			ExternalAddresses: map[model.ClusterID][]string{
				"c": addrList,
			},
			AutoAddresses: ips,
			Labels:        labels,
			ExternalName:  text,
		}
		if exportTo != "" {
			svc.ExportTo = strings.Split(exportTo, "|")
		}
		for j, pn := range strings.Split(ports, "|") {
			svc.Ports = append(svc.Ports, model.Port{Name: pn, Port: port + uint32(j), Protocol: model.Protocol(text)})
		}
		var eps []*model.Endpoint
		for j, a := range addrList {
			ep := &model.Endpoint{
				Port: port, ServicePortName: svc.Ports[j%len(svc.Ports)].Name, Labels: labels,
				Locality: model.ParseLocality(text), Network: model.NetworkID(text), Cluster: model.ClusterID(text),
				ServiceAccount: text, TLSMode: model.TLSMode(enums % 3), Health: model.HealthStatus(enums % 5),
				Weight: uint32(enums), WorkloadKind: model.WorkloadKind(enums % 3), WorkloadNamespace: namespace, WorkloadName: a,
			}
			if ip, err := netip.ParseAddr(a); err == nil {
				ep.Addresses = []netip.Addr{ip}
			} else {
				ep.Hostname = a
			}
			eps = append(eps, ep)
		}
		st.services = append(st.services, svc)
		st.endpoints[svc.Key()] = eps
	}
	for i, a := range addrList {
		w := &model.WorkloadInstance{Kind: model.WorkloadKind(1 + (int(enums)+i)%2), Namespace: namespace, Name: a + text}
		w.Endpoint = model.Endpoint{Labels: labels, Cluster: model.ClusterID(text), ServiceAccount: text, Locality: model.ParseLocality(text)}
		if ip, err := netip.ParseAddr(a); err == nil {
			w.Endpoint.Addresses = []netip.Addr{ip}
		} else {
			w.Endpoint.Hostname = a
		}
		st.workloads = append(st.workloads, w)
	}
	st.diags = []model.Diagnostic{
		{Severity: model.Severity(enums % 3), Kind: text, Namespace: namespace, Name: hosts, Cluster: model.ClusterID(text), Message: text},
		{Severity: model.Warning, Kind: "ServiceEntry", Namespace: namespace, Name: ports, Message: labelKV},
	}
	return st
}

// load writes st into a memory registry, in order or reversed.
func (st fuzzState) load(reverse bool) *memory.Registry {
	r, err := memory.New(memory.Options{ClusterID: "fuzz"})
	if err != nil {
		panic(err)
	}
	svcs, wls, diags := slices.Clone(st.services), slices.Clone(st.workloads), slices.Clone(st.diags)
	if reverse {
		slices.Reverse(svcs)
		slices.Reverse(wls)
		slices.Reverse(diags)
	}
	for _, s := range svcs {
		r.AddService(s)
		eps := slices.Clone(st.endpoints[s.Key()])
		if reverse {
			slices.Reverse(eps)
		}
		r.SetEndpoints(s.Key(), eps...)
	}
	r.AddWorkload(wls...)
	r.AddDiagnostic(diags...)
	return r
}

// FuzzDump builds a registry from fuzz input and checks its dump: valid
// JSON, no null anywhere (dump-format.md: empty lists are [], absent
// strings ""), the same bytes whatever order the registry was filled in,
// and a round trip through registry.Dump that reproduces the bytes.
func FuzzDump(f *testing.F) {
	f.Add("reviews.default.svc.cluster.local", "default", "http|grpc", "10.0.0.1|10.0.0.2", "app=reviews", "", "cluster-a", uint32(9080), uint8(0))
	f.Add("*.example.com|db.example.com", "ns", "tcp", "db.internal|2001:db8::1|10.0.0.0/8", "a=b|c=", ".|~", "net", uint32(0), uint8(255))
	f.Add("", "", "", "", "", "", "", uint32(4294967295), uint8(7))
	f.Add("ü.example|\x00|\"quoted\"", "ns\n", "<html>|&", "::ffff:10.0.0.1|fe80::1%eth0", "\xff=\xfe", "*", "\u2028r/z/s", uint32(80), uint8(9))
	f.Add("a|a|a", "dup", "p|p", "10.0.0.1|10.0.0.1", "k=v|k=w", "b|a", "r//s", uint32(1), uint8(3))
	f.Fuzz(func(t *testing.T, hosts, namespace, ports, addrs, labelKV, exportTo, text string, port uint32, enums uint8) {
		st := buildFuzzState(hosts, namespace, ports, addrs, labelKV, exportTo, text, port, enums)
		var a, b bytes.Buffer
		if err := registry.WriteJSON(&a, st.load(false)); err != nil {
			t.Fatal(err)
		}
		if err := registry.WriteJSON(&b, st.load(true)); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(a.Bytes()) {
			t.Fatalf("dump is not valid JSON:\n%s", a.Bytes())
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("dump depends on insertion order:\n%s\n---\n%s", a.Bytes(), b.Bytes())
		}
		var anyV any
		if err := json.Unmarshal(a.Bytes(), &anyV); err != nil {
			t.Fatal(err)
		}
		if path := findNull(anyV, "$"); path != "" {
			t.Fatalf("dump has null at %s:\n%s", path, a.Bytes())
		}
		var d registry.Dump
		dec := json.NewDecoder(bytes.NewReader(a.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("dump does not decode into registry.Dump: %v", err)
		}
		if d.Version != registry.DumpVersion {
			t.Fatalf("version %d", d.Version)
		}
		var c bytes.Buffer
		if err := d.WriteJSON(&c); err != nil {
			t.Fatal(err)
		}
		// Byte for byte when every input string is valid UTF-8. JSON
		// cannot carry invalid UTF-8: encoding/json writes it as
		// "\ufffd", which decodes to U+FFFD and re-encodes as that
		// character; the decoded values must still agree.
		if allValidUTF8(hosts, namespace, ports, addrs, labelKV, exportTo, text) {
			if !bytes.Equal(a.Bytes(), c.Bytes()) {
				t.Fatalf("round trip changed the dump:\n%s\n---\n%s", a.Bytes(), c.Bytes())
			}
		} else {
			var d2 registry.Dump
			if err := json.Unmarshal(c.Bytes(), &d2); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d, d2) {
				t.Fatalf("round trip changed the decoded dump:\n%s\n---\n%s", a.Bytes(), c.Bytes())
			}
		}
	})
}

func allValidUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// findNull returns the path of a JSON null in v, or "".
func findNull(v any, path string) string {
	switch x := v.(type) {
	case nil:
		return path
	case map[string]any:
		for k, e := range x {
			if p := findNull(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := findNull(e, path+"["+string(rune('0'+i%10))+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}
