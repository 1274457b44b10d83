package registry

import (
	"bytes"
	"encoding/json"
	"io"
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// DumpVersion is the version of the dump format this package writes.
const DumpVersion = 1

// Dump is a registry's state in the registry dump format (version 1,
// DUMP-FORMAT.md at the repository's root): the JSON contract between
// registry-dump and every tool or test that reads a dump. Fields are added
// without a version change; readers ignore fields they do not know. Build
// one with NewDump; encode it with encoding/json or WriteJSON. Lists and
// maps are never nil, so they encode as [] and {} rather than null.
type Dump struct {
	Version   int            `json:"version"`
	Services  []DumpService  `json:"services"`
	Workloads []DumpWorkload `json:"workloads"`
	// NetworkGateways is empty unless the registry is a
	// GatewayDiscovery.
	NetworkGateways []DumpNetworkGateway `json:"networkGateways"`
	Diagnostics     []DumpDiagnostic     `json:"diagnostics"`
}

// DumpService is a service in a Dump.
type DumpService struct {
	Hostname          string              `json:"hostname"`
	Namespace         string              `json:"namespace"`
	Name              string              `json:"name"`
	Provider          string              `json:"provider"`
	Resolution        string              `json:"resolution"`
	MeshExternal      bool                `json:"meshExternal"`
	Ports             []DumpPort          `json:"ports"`
	Addresses         map[string][]string `json:"addresses"`
	ExternalAddresses map[string][]string `json:"externalAddresses"`
	AutoAddresses     []string            `json:"autoAddresses"`
	ExportTo          []string            `json:"exportTo"`
	ExternalName      string              `json:"externalName"`
	// Selector is the Kubernetes Service's selector or the ServiceEntry's
	// workloadSelector labels; {} when there is none.
	Selector map[string]string `json:"selector"`
	// ServiceAccounts are the identities the service's workloads may
	// run as, sorted.
	ServiceAccounts []string `json:"serviceAccounts"`
	// TrafficDistribution is "PreferSameZone", "PreferSameNode" or "" (see
	// model.Service.TrafficDistribution).
	TrafficDistribution string `json:"trafficDistribution"`
	// InternalTrafficPolicy is "Local" for a Service with
	// internalTrafficPolicy Local, else "".
	InternalTrafficPolicy string         `json:"internalTrafficPolicy"`
	Endpoints             []DumpEndpoint `json:"endpoints"`
}

// DumpPort is a service port in a Dump.
type DumpPort struct {
	Name     string `json:"name"`
	Port     uint32 `json:"port"`
	Protocol string `json:"protocol"`
	// TargetPort is the numeric port endpoints listen on when the
	// source says so, else 0; TargetPortName a Kubernetes Service's named
	// targetPort, else "".
	TargetPort     uint32 `json:"targetPort"`
	TargetPortName string `json:"targetPortName"`
}

// DumpEndpoint is an endpoint in a Dump.
type DumpEndpoint struct {
	ServicePort    string            `json:"servicePort"`
	Address        string            `json:"address"`
	Addresses      []string          `json:"addresses"`
	Port           uint32            `json:"port"`
	Cluster        string            `json:"cluster"`
	Network        string            `json:"network"`
	Locality       string            `json:"locality"`
	ServiceAccount string            `json:"serviceAccount"`
	TLSMode        string            `json:"tlsMode"`
	Health         string            `json:"health"`
	Workload       string            `json:"workload"`
	Labels         map[string]string `json:"labels"`
	Weight         uint32            `json:"weight"`
	// Discoverability is "DiscoverableFromSameCluster" for an endpoint
	// only the proxies of its cluster may be sent (see
	// model.Endpoint.Discoverability); "" (absent) for AlwaysDiscoverable,
	// so that dumps of registries without Multi-Cluster Services read as
	// before.
	Discoverability string `json:"discoverability,omitempty"`
	// NodeName is the pod's node; Hostname and Subdomain its DNS names in
	// a headless Service (see model.Endpoint.PodHostname); "" when not
	// known.
	NodeName  string `json:"nodeName"`
	Hostname  string `json:"hostname"`
	Subdomain string `json:"subdomain"`
	// Serving is the endpoint's serving condition (see
	// model.Endpoint.Serving).
	Serving bool `json:"serving"`
	// Hints are the endpoint's topology hints; absent when it has none.
	Hints *DumpHints `json:"hints,omitempty"`
}

// DumpHints are an endpoint's topology hints in a Dump.
type DumpHints struct {
	ForZones []string `json:"forZones"`
	ForNodes []string `json:"forNodes"`
}

// DumpWorkload is a workload instance in a Dump.
type DumpWorkload struct {
	Name           string            `json:"name"`
	Namespace      string            `json:"namespace"`
	Kind           string            `json:"kind"`
	Cluster        string            `json:"cluster"`
	Addresses      []string          `json:"addresses"`
	Labels         map[string]string `json:"labels"`
	ServiceAccount string            `json:"serviceAccount"`
	Network        string            `json:"network"`
	Locality       string            `json:"locality"`
}

// DumpNetworkGateway is a network gateway in a Dump.
type DumpNetworkGateway struct {
	Network        string `json:"network"`
	Cluster        string `json:"cluster"`
	Address        string `json:"address"`
	Port           uint32 `json:"port"`
	HBONEPort      uint32 `json:"hbonePort"`
	ServiceAccount string `json:"serviceAccount"`
	Source         string `json:"source"`
}

// DumpDiagnostic is a diagnostic in a Dump.
type DumpDiagnostic struct {
	Severity  string `json:"severity"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Cluster   string `json:"cluster"`
	Message   string `json:"message"`
}

// NewDump captures the current state of d. The order of every list is
// deterministic, as the format requires, whatever order d returns.
func NewDump(d Discovery) *Dump {
	out := &Dump{
		Version:         DumpVersion,
		Services:        []DumpService{},
		Workloads:       []DumpWorkload{},
		NetworkGateways: []DumpNetworkGateway{},
		Diagnostics:     []DumpDiagnostic{},
	}
	for _, svc := range d.Services() {
		out.Services = append(out.Services, DumpServiceOf(svc, d.Endpoints(svc.Key(), EndpointQuery{})))
	}
	slices.SortStableFunc(out.Services, func(a, b DumpService) int {
		if c := compareStrings(a.Hostname, b.Hostname); c != 0 {
			return c
		}
		return compareStrings(a.Namespace, b.Namespace)
	})
	for _, w := range d.Workloads() {
		if w.Endpoint.Health != model.Healthy {
			continue // the dump holds the workloads selectors take
		}
		out.Workloads = append(out.Workloads, DumpWorkloadOf(w))
	}
	slices.SortStableFunc(out.Workloads, func(a, b DumpWorkload) int {
		for _, c := range [...]int{
			compareStrings(a.Cluster, b.Cluster), compareStrings(a.Kind, b.Kind),
			compareStrings(a.Namespace, b.Namespace), compareStrings(a.Name, b.Name),
		} {
			if c != 0 {
				return c
			}
		}
		return 0
	})
	if gd, ok := d.(GatewayDiscovery); ok {
		for _, g := range model.SortGateways(slices.Clone(gd.NetworkGateways())) {
			out.NetworkGateways = append(out.NetworkGateways, DumpNetworkGatewayOf(g))
		}
	}
	diags := slices.Clone(d.Diagnostics())
	model.SortDiagnostics(diags)
	for _, dg := range diags {
		out.Diagnostics = append(out.Diagnostics, DumpDiagnosticOf(dg))
	}
	return out
}

// DumpNetworkGatewayOf returns a gateway as the dump writes it.
func DumpNetworkGatewayOf(g model.NetworkGateway) DumpNetworkGateway {
	return DumpNetworkGateway{
		Network: string(g.Network), Cluster: string(g.Cluster), Address: g.Address,
		Port: g.Port, HBONEPort: g.HBONEPort, ServiceAccount: g.ServiceAccount,
		Source: g.Source.String(),
	}
}

// DumpDiagnosticOf returns a diagnostic as the dump writes it.
func DumpDiagnosticOf(dg model.Diagnostic) DumpDiagnostic {
	return DumpDiagnostic{
		Severity: dg.Severity.String(), Kind: dg.Kind, Namespace: dg.Namespace,
		Name: dg.Name, Cluster: string(dg.Cluster), Message: dg.Message,
	}
}

// WriteJSON writes the dump of d as indented JSON followed by a newline.
// Two dumps of the same state are byte-for-byte identical.
func WriteJSON(w io.Writer, d Discovery) error {
	return NewDump(d).WriteJSON(w)
}

// WriteJSON writes the dump as indented JSON followed by a newline.
func (d *Dump) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// DumpServiceOf returns a service and its endpoints as the dump writes
// them: the endpoints sorted as model.CompareEndpoints sorts them.
func DumpServiceOf(svc *model.Service, eps []*model.Endpoint) DumpService {
	ds := DumpService{
		Hostname:            string(svc.Hostname),
		Namespace:           svc.Namespace,
		Name:                svc.Name,
		Provider:            svc.Provider.String(),
		Resolution:          svc.Resolution.String(),
		MeshExternal:        svc.MeshExternal,
		Ports:               make([]DumpPort, 0, len(svc.Ports)),
		Addresses:           map[string][]string{},
		ExternalAddresses:   map[string][]string{},
		AutoAddresses:       make([]string, 0, len(svc.AutoAddresses)),
		ExportTo:            slices.Sorted(slices.Values(svc.ExportTo)),
		ExternalName:        svc.ExternalName,
		Selector:            nonNilMap(svc.Selector),
		ServiceAccounts:     append([]string{}, svc.ServiceAccounts...),
		TrafficDistribution: svc.TrafficDistribution,
		Endpoints:           make([]DumpEndpoint, 0, len(eps)),
	}
	if svc.InternalTrafficPolicyLocal {
		ds.InternalTrafficPolicy = "Local"
	}
	for _, p := range svc.Ports {
		ds.Ports = append(ds.Ports, DumpPort{
			Name: p.Name, Port: p.Port, Protocol: string(p.Protocol),
			TargetPort: p.TargetPort, TargetPortName: p.TargetPortName,
		})
	}
	for c, vips := range svc.Addresses {
		ds.Addresses[string(c)] = prefixStrings(vips)
	}
	for c, addrs := range svc.ExternalAddresses {
		ds.ExternalAddresses[string(c)] = append([]string{}, addrs...)
	}
	for _, a := range svc.AutoAddresses {
		ds.AutoAddresses = append(ds.AutoAddresses, a.String())
	}
	if len(ds.ExportTo) == 0 {
		ds.ExportTo = []string{"*"}
	}
	sorted := slices.Clone(eps)
	slices.SortStableFunc(sorted, model.CompareEndpoints)
	for _, ep := range sorted {
		var hints *DumpHints
		if !ep.Hints.IsZero() {
			hints = &DumpHints{ForZones: nonNilSlice(ep.Hints.ForZones), ForNodes: nonNilSlice(ep.Hints.ForNodes)}
		}
		ds.Endpoints = append(ds.Endpoints, DumpEndpoint{
			ServicePort:     ep.ServicePortName,
			Address:         ep.Address(),
			Addresses:       ep.AddressStrings(),
			Port:            ep.Port,
			Cluster:         string(ep.Cluster),
			Network:         string(ep.Network),
			Locality:        ep.Locality.String(),
			ServiceAccount:  ep.ServiceAccount,
			TLSMode:         ep.TLSMode.String(),
			Health:          ep.Health.String(),
			Workload:        ep.Workload(),
			Labels:          nonNilMap(ep.Labels),
			Weight:          ep.Weight,
			Discoverability: discoverability(ep.Discoverability),
			NodeName:        ep.NodeName,
			Hostname:        ep.PodHostname,
			Subdomain:       ep.PodSubdomain,
			Serving:         ep.Serving,
			Hints:           hints,
		})
	}
	return ds
}

// DumpWorkloadOf returns a workload instance as the dump writes it.
func DumpWorkloadOf(w *model.WorkloadInstance) DumpWorkload {
	return DumpWorkload{
		Name:           w.Name,
		Namespace:      w.Namespace,
		Kind:           w.Kind.String(),
		Cluster:        string(w.Endpoint.Cluster),
		Addresses:      w.Endpoint.AddressStrings(),
		Labels:         nonNilMap(w.Endpoint.Labels),
		ServiceAccount: w.Endpoint.ServiceAccount,
		Network:        string(w.Endpoint.Network),
		Locality:       w.Endpoint.Locality.String(),
	}
}

// prefixStrings renders VIPs: a single address as the bare address, a
// range in CIDR notation.
func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if p.IsSingleIP() {
			out[i] = p.Addr().String()
		} else {
			out[i] = p.String()
		}
	}
	return out
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// discoverability spells an endpoint's discoverability for the dump: ""
// for AlwaysDiscoverable, the default a reader takes for an absent field.
func discoverability(d model.Discoverability) string {
	if d == model.AlwaysDiscoverable {
		return ""
	}
	return d.String()
}
