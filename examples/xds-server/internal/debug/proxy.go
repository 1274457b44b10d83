package debug

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
)

// Nodes is what /debug/proxy reads: the xDS server's connected nodes.
type Nodes interface {
	// Node returns a connected node; false for one not connected.
	Node(id string) (Node, bool)
	// IDs returns the connected nodes' IDs, sorted.
	IDs() []string
}

// Node is one connected node as the xDS server knows it.
type Node struct {
	ID    string
	Proxy proxyview.Proxy
	// Snapshot is the view's snapshot the node's resources were last
	// built from: the page shows the node's view as it was served.
	Snapshot *proxyview.Snapshot
	Streams  int
	Types    []NodeType
}

// NodeType is what a node is served of one xDS resource type.
type NodeType struct {
	TypeURL   string `json:"type"`
	Version   string `json:"version"`
	Resources int    `json:"resources"`
	// Versions is the number of versions the type was given since the
	// node connected; Responses the number of responses of the type sent
	// on its streams.
	Versions  int   `json:"versions"`
	Responses int64 `json:"responses"`
}

// ProxyPage is /debug/proxy?node=ID: one connected node's view.
type ProxyPage struct {
	Node  string    `json:"node"`
	Proxy ProxyInfo `json:"proxy"`
	// Generation is that of the view's snapshot the page shows.
	Generation uint64         `json:"generation"`
	Streams    int            `json:"streams"`
	XDS        []NodeType     `json:"xds"`
	Services   []ProxyService `json:"services"`
}

// ProxyInfo is the proxy a node's metadata describes.
type ProxyInfo struct {
	Namespace  string            `json:"namespace"`
	Cluster    string            `json:"cluster"`
	Network    string            `json:"network"`
	IPs        []string          `json:"ips"`
	IPFamilies string            `json:"ipFamilies"`
	Labels     map[string]string `json:"labels"`
	Locality   string            `json:"locality"`
	NodeName   string            `json:"nodeName"`
	DNSCapture bool              `json:"dnsCapture"`
}

// ProxyService is one service the proxy sees (the one its hostname names
// for the proxy), with the VIPs the proxy uses for it.
type ProxyService struct {
	Hostname  string      `json:"hostname"`
	Namespace string      `json:"namespace"`
	Addresses []string    `json:"addresses"`
	Ports     []ProxyPort `json:"ports"`
}

// ProxyPort is one port of a service, with the proxy's endpoints of it.
type ProxyPort struct {
	Name      string          `json:"name"`
	Port      uint32          `json:"port"`
	Endpoints []ProxyEndpoint `json:"endpoints"`
}

// ProxyEndpoint is one endpoint as the proxy uses it: a workload it
// reaches directly, or the gateway that stands for workloads of a network
// it does not reach.
type ProxyEndpoint struct {
	Address  string                       `json:"address"`
	Port     uint32                       `json:"port"`
	Locality string                       `json:"locality"`
	Weight   uint32                       `json:"weight"`
	Health   string                       `json:"health"`
	Gateway  *registry.DumpNetworkGateway `json:"gateway,omitempty"`
}

func serveProxy(nodes Nodes, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("node")
		if id == "" {
			var ids []string
			if nodes != nil {
				ids = nodes.IDs()
			}
			http.Error(w, fmt.Sprintf("missing node: ask for /debug/proxy?node=ID; connected nodes: [%s]",
				strings.Join(ids, ", ")), http.StatusBadRequest)
			return
		}
		var n Node
		ok := false
		if nodes != nil {
			n, ok = nodes.Node(id)
		}
		if !ok {
			http.Error(w, fmt.Sprintf("node %q is not connected", id), http.StatusNotFound)
			return
		}
		writeValue(w, log, proxyPage(n))
	}
}

func proxyPage(n Node) ProxyPage {
	p, s := &n.Proxy, n.Snapshot
	page := ProxyPage{
		Node:       n.ID,
		Generation: s.Generation(),
		Streams:    n.Streams,
		XDS:        append([]NodeType{}, n.Types...),
		Services:   []ProxyService{},
		Proxy: ProxyInfo{
			Namespace: p.Namespace, Cluster: string(p.Cluster), Network: string(p.Network),
			IPs: []string{}, IPFamilies: p.IPFamilies().String(), Labels: map[string]string{},
			Locality: p.Locality.String(), NodeName: p.NodeName, DNSCapture: p.DNSCapture,
		},
	}
	for _, ip := range p.IPs {
		page.Proxy.IPs = append(page.Proxy.IPs, ip.String())
	}
	for k, v := range p.Labels {
		page.Proxy.Labels[k] = v
	}
	for _, svc := range s.Services(p) {
		ps := ProxyService{
			Hostname: string(svc.Hostname), Namespace: svc.Namespace,
			Addresses: prefixStrings(s.Addresses(p, svc)), Ports: []ProxyPort{},
		}
		for _, port := range svc.Ports {
			pp := ProxyPort{Name: port.Name, Port: port.Port, Endpoints: []ProxyEndpoint{}}
			for _, g := range s.Endpoints(p, svc.Key(), port.Name) {
				for _, ep := range g.Endpoints {
					pp.Endpoints = append(pp.Endpoints, ProxyEndpoint{
						Address: ep.Address.String(), Port: ep.Port, Locality: g.Locality.String(),
						Weight: ep.Weight, Health: ep.Health.String(), Gateway: dumpGateway(ep.Gateway),
					})
				}
			}
			ps.Ports = append(ps.Ports, pp)
		}
		page.Services = append(page.Services, ps)
	}
	return page
}

func dumpGateway(g *model.NetworkGateway) *registry.DumpNetworkGateway {
	if g == nil {
		return nil
	}
	return &registry.DumpNetworkGateway{
		Network: string(g.Network), Cluster: string(g.Cluster), Address: g.Address, Port: g.Port,
		HBONEPort: g.HBONEPort, ServiceAccount: g.ServiceAccount, Source: g.Source.String(),
	}
}

// prefixStrings writes VIPs as the dump does: a single IP without its
// prefix length.
func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p.IsSingleIP() {
			out = append(out, p.Addr().String())
		} else {
			out = append(out, p.String())
		}
	}
	return out
}
