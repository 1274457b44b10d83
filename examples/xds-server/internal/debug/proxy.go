package debug

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/proxyview"
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
	Hostname  string                `json:"hostname"`
	Namespace string                `json:"namespace"`
	Addresses []string              `json:"addresses"`
	Ports     []debughttp.ProxyPort `json:"ports"`
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
		page.Services = append(page.Services, ProxyService{
			Hostname: string(svc.Hostname), Namespace: svc.Namespace,
			Addresses: debughttp.VIPStrings(s.Addresses(p, svc)), Ports: debughttp.PortsFor(s, p, svc),
		})
	}
	return page
}
