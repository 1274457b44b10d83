package debughttp

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry"
)

// ProxyServices is /proxy without service=: the services visible to the
// proxy, paged, at a generation of the view.
type ProxyServices struct {
	Generation uint64               `json:"generation"`
	Services   Page[VisibleService] `json:"services"`
	// Inbound are the service ports the proxy's IPs serve, as
	// "NAMESPACE/HOSTNAME:PORT -> TARGETPORT".
	Inbound []string `json:"inbound"`
}

// VisibleService is a service a proxy sees, with the VIPs it uses.
type VisibleService struct {
	Hostname  string   `json:"hostname"`
	Namespace string   `json:"namespace"`
	Addresses []string `json:"addresses"`
}

// ProxyEndpoints is /proxy with service=: the proxy's endpoints of each
// port of one service.
type ProxyEndpoints struct {
	Generation uint64      `json:"generation"`
	Service    string      `json:"service"`
	Ports      []ProxyPort `json:"ports"`
}

// ProxyPort is one port's endpoints for a proxy.
type ProxyPort struct {
	Name      string          `json:"name"`
	Port      uint32          `json:"port"`
	Endpoints []ProxyEndpoint `json:"endpoints"`
}

// ProxyEndpoint is one endpoint as the proxy uses it: a workload it
// reaches directly, or the gateway that stands for workloads of a network
// it does not reach.
type ProxyEndpoint struct {
	// Address is an IP, or "unix://PATH" for a unix domain socket.
	Address  string `json:"address"`
	Port     uint32 `json:"port"`
	Weight   uint32 `json:"weight"`
	Health   string `json:"health"`
	Locality string `json:"locality"`
	Priority uint32 `json:"priority"`
	// Gateway is the gateway, for a gateway endpoint.
	Gateway *registry.DumpNetworkGateway `json:"gateway,omitempty"`
}

// PortsFor returns a proxy's endpoints of each port of a service, as
// /proxy shows them.
func PortsFor(snap *proxyview.Snapshot, p *proxyview.Proxy, svc *model.Service) []ProxyPort {
	out := []ProxyPort{}
	for _, port := range svc.Ports {
		pp := ProxyPort{Name: port.Name, Port: port.Port, Endpoints: []ProxyEndpoint{}}
		for _, le := range snap.Endpoints(p, svc.Key(), port.Name) {
			for _, ep := range le.Endpoints {
				pe := ProxyEndpoint{Address: ep.Address.String(), Port: ep.Port, Weight: ep.Weight, Health: ep.Health.String(),
					Locality: le.Locality.String(), Priority: le.Priority}
				if ep.Path != "" {
					pe.Address = "unix://" + ep.Path
				}
				if ep.Gateway != nil {
					g := registry.DumpNetworkGatewayOf(*ep.Gateway)
					pe.Gateway = &g
				}
				pp.Endpoints = append(pp.Endpoints, pe)
			}
		}
		out = append(out, pp)
	}
	return out
}

// VIPStrings writes VIPs as the dump does: a single IP without its
// prefix length.
func VIPStrings(vips []netip.Prefix) []string {
	out := make([]string, 0, len(vips))
	for _, v := range vips {
		if v.IsSingleIP() {
			out = append(out, v.Addr().String())
		} else {
			out = append(out, v.String())
		}
	}
	return out
}

func (h *handler) proxy(w http.ResponseWriter, r *http.Request) {
	if h.opts.View == nil {
		http.Error(w, "no proxy view: the handler was built without Options.View", http.StatusNotFound)
		return
	}
	p, err := proxyParams(r)
	if err != nil {
		badRequest(w, err)
		return
	}
	snap := h.opts.View.Snapshot()
	if r.URL.Query().Get("service") == "" {
		visible := snap.Services(p)
		page, err := pageOf(h, r, visible)
		if err != nil {
			badRequest(w, err)
			return
		}
		out := ProxyServices{Generation: snap.Generation(), Services: Page[VisibleService]{Items: []VisibleService{}, Total: page.Total, Next: page.Next},
			Inbound: []string{}}
		for _, t := range h.opts.View.Inbound(p) {
			out.Inbound = append(out.Inbound, fmt.Sprintf("%s:%d -> %d", t.Service.Key(), t.Port.Port, t.TargetPort))
		}
		for _, svc := range page.Items {
			vs := VisibleService{Hostname: string(svc.Hostname), Namespace: svc.Namespace, Addresses: VIPStrings(snap.Addresses(p, svc))}
			out.Services.Items = append(out.Services.Items, vs)
		}
		h.write(w, out)
		return
	}
	key, err := serviceParam(r)
	if err != nil {
		badRequest(w, err)
		return
	}
	svc := snap.Service(p, key.Hostname)
	if svc == nil || svc.Key() != key {
		http.Error(w, fmt.Sprintf("service %s: not what %s names for this proxy", key, key.Hostname), http.StatusNotFound)
		return
	}
	h.write(w, ProxyEndpoints{Generation: snap.Generation(), Service: key.String(), Ports: PortsFor(snap, p, svc)})
}

// proxyParams reads the proxy a request describes.
func proxyParams(r *http.Request) (*proxyview.Proxy, error) {
	q := r.URL.Query()
	p := &proxyview.Proxy{
		Namespace: q.Get("namespace"),
		Cluster:   model.ClusterID(q.Get("cluster")),
		Network:   model.NetworkID(q.Get("network")),
		Locality:  model.Locality{Region: q.Get("region"), Zone: q.Get("zone"), Subzone: q.Get("subzone")},
		NodeName:  q.Get("node"),
	}
	if v := q.Get("ip"); v != "" {
		for _, s := range strings.Split(v, ",") {
			ip, err := netip.ParseAddr(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("ip %q: not an IP address", s)
			}
			p.IPs = append(p.IPs, ip)
		}
	}
	if v := q.Get("dnsCapture"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("dnsCapture %q: want true or false", v)
		}
		p.DNSCapture = b
	}
	return p, nil
}
