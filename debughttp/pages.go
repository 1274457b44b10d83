package debughttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func (h *handler) dump(w http.ResponseWriter, _ *http.Request) {
	n := 0
	for _, svc := range h.reg.Services() {
		n += len(h.reg.Endpoints(svc.Key(), registry.EndpointQuery{}))
	}
	if n > h.opts.MaxDumpEndpoints {
		http.Error(w, fmt.Sprintf("the registry holds %d endpoints, more than the %d /dump writes whole: read /services and /endpoints page by page",
			n, h.opts.MaxDumpEndpoints), http.StatusRequestEntityTooLarge)
		return
	}
	h.write(w, registry.NewDump(h.reg))
}

// ServiceSummary is a service on /services: the dump's service with the
// number of its endpoints in place of the list.
type ServiceSummary struct {
	registry.DumpService
	// Endpoints shadows DumpService.Endpoints in JSON.
	Endpoints int `json:"endpoints"`
}

func (h *handler) services(w http.ResponseWriter, r *http.Request) {
	all := h.reg.Services()
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		all = slices.DeleteFunc(slices.Clone(all), func(s *model.Service) bool { return s.Namespace != ns })
	}
	page, err := pageOf(h, r, all)
	if err != nil {
		badRequest(w, err)
		return
	}
	out := Page[ServiceSummary]{Items: []ServiceSummary{}, Total: page.Total, Next: page.Next}
	for _, svc := range page.Items {
		ds := registry.DumpServiceOf(svc, nil)
		ds.Endpoints = nil
		out.Items = append(out.Items, ServiceSummary{DumpService: ds, Endpoints: len(h.reg.Endpoints(svc.Key(), registry.EndpointQuery{}))})
	}
	h.write(w, out)
}

// serviceParam reads ?service=NAMESPACE/HOSTNAME.
func serviceParam(r *http.Request) (model.ServiceKey, error) {
	v := r.URL.Query().Get("service")
	ns, host, ok := strings.Cut(v, "/")
	if !ok || ns == "" || host == "" {
		return model.ServiceKey{}, fmt.Errorf("service %q: want NAMESPACE/HOSTNAME", v)
	}
	return model.ServiceKey{Namespace: ns, Hostname: model.Hostname(host)}, nil
}

// ClusterEndpoints are a service's endpoints from one cluster.
type ClusterEndpoints struct {
	Cluster   string                  `json:"cluster"`
	Endpoints []registry.DumpEndpoint `json:"endpoints"`
}

// ServiceEndpoints is a service's page on /endpoints: its endpoints by
// cluster, the page cutting the list of all its endpoints.
type ServiceEndpoints struct {
	Service  string             `json:"service"`
	Clusters []ClusterEndpoints `json:"clusters"`
	Total    int                `json:"total"`
	Next     *int               `json:"next,omitempty"`
}

func (h *handler) endpoints(w http.ResponseWriter, r *http.Request) {
	key, err := serviceParam(r)
	if err != nil {
		badRequest(w, err)
		return
	}
	svc := h.reg.ServiceByKey(key)
	if svc == nil {
		http.Error(w, fmt.Sprintf("service %s: not in the registry", key), http.StatusNotFound)
		return
	}
	q := registry.EndpointQuery{Port: r.URL.Query().Get("port"), Cluster: model.ClusterID(r.URL.Query().Get("cluster"))}
	if q.Port != "" {
		if _, ok := svc.PortByName(q.Port); !ok {
			badRequest(w, fmt.Errorf("port %q: service %s has no port of that name", q.Port, key))
			return
		}
	}
	eps := registry.DumpServiceOf(svc, h.reg.Endpoints(key, q)).Endpoints
	page, err := pageOf(h, r, eps)
	if err != nil {
		badRequest(w, err)
		return
	}
	out := ServiceEndpoints{Service: key.String(), Clusters: []ClusterEndpoints{}, Total: page.Total, Next: page.Next}
	for _, ep := range page.Items {
		i := slices.IndexFunc(out.Clusters, func(c ClusterEndpoints) bool { return c.Cluster == ep.Cluster })
		if i < 0 {
			out.Clusters = append(out.Clusters, ClusterEndpoints{Cluster: ep.Cluster})
			i = len(out.Clusters) - 1
		}
		out.Clusters[i].Endpoints = append(out.Clusters[i].Endpoints, ep)
	}
	slices.SortStableFunc(out.Clusters, func(a, b ClusterEndpoints) int { return strings.Compare(a.Cluster, b.Cluster) })
	h.write(w, out)
}

func (h *handler) workloads(w http.ResponseWriter, r *http.Request) {
	var all []*model.WorkloadInstance
	if v := r.URL.Query().Get("ip"); v != "" {
		ip, err := netip.ParseAddr(v)
		if err != nil {
			badRequest(w, fmt.Errorf("ip %q: not an IP address", v))
			return
		}
		all = h.reg.WorkloadsByIP(ip)
	} else {
		all = h.reg.Workloads()
	}
	page, err := pageOf(h, r, all)
	if err != nil {
		badRequest(w, err)
		return
	}
	out := Page[registry.DumpWorkload]{Items: []registry.DumpWorkload{}, Total: page.Total, Next: page.Next}
	for _, wl := range page.Items {
		out.Items = append(out.Items, registry.DumpWorkloadOf(wl))
	}
	h.write(w, out)
}

func (h *handler) diagnostics(w http.ResponseWriter, r *http.Request) {
	all := h.reg.Diagnostics()
	if v := r.URL.Query().Get("severity"); v != "" {
		sev, err := parseSeverity(v)
		if err != nil {
			badRequest(w, err)
			return
		}
		all = slices.DeleteFunc(slices.Clone(all), func(d model.Diagnostic) bool { return d.Severity != sev })
	}
	page, err := pageOf(h, r, all)
	if err != nil {
		badRequest(w, err)
		return
	}
	out := Page[registry.DumpDiagnostic]{Items: []registry.DumpDiagnostic{}, Total: page.Total, Next: page.Next}
	for _, d := range page.Items {
		out.Items = append(out.Items, registry.DumpDiagnosticOf(d))
	}
	h.write(w, out)
}

func parseSeverity(v string) (model.Severity, error) {
	for _, s := range []model.Severity{model.Error, model.Warning} {
		if strings.EqualFold(v, s.String()) {
			return s, nil
		}
	}
	return 0, errors.New("severity " + fmt.Sprintf("%q", v) + ": want Error or Warning")
}

func (h *handler) gateways(w http.ResponseWriter, r *http.Request) {
	gd, ok := h.reg.(registry.GatewayDiscovery)
	if !ok {
		http.Error(w, "this registry knows no network gateways", http.StatusNotFound)
		return
	}
	page, err := pageOf(h, r, gd.NetworkGateways())
	if err != nil {
		badRequest(w, err)
		return
	}
	out := Page[registry.DumpNetworkGateway]{Items: []registry.DumpNetworkGateway{}, Total: page.Total, Next: page.Next}
	for _, g := range page.Items {
		out.Items = append(out.Items, registry.DumpNetworkGatewayOf(g))
	}
	h.write(w, out)
}
