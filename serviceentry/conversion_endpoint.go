package serviceentry

import (
	"maps"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/model"
)

// targetPort decides the port an endpoint listens on for a service port:
// the workload's port for the port's name, else the port's targetPort,
// else the port number; a unix socket has no port (0).
func targetPort(portMap map[string]uint32, p model.Port, unix bool) uint32 {
	switch {
	case unix:
		return 0
	case portMap[p.Name] > 0:
		return portMap[p.Name]
	case p.TargetPort > 0:
		return p.TargetPort
	}
	return p.Port
}

// expand returns one endpoint per service port for a workload endpoint
// base. Each endpoint shares its labels and addresses with base, which
// must not be modified afterwards.
func expand(base model.Endpoint, portMap map[string]uint32, ports []model.Port) []*model.Endpoint {
	out := make([]*model.Endpoint, 0, len(ports))
	for _, p := range ports {
		ep := base
		ep.ServicePortName = p.Name
		ep.Port = targetPort(portMap, p, isUnix(&base))
		out = append(out, &ep)
	}
	return out
}

// inlineEndpoints converts the endpoints a valid ServiceEntry lists, in
// declaration order, one per (endpoint, port). Labels are the endpoint's,
// with topology labels; TLS mode, service account and locality follow the
// WorkloadEntry rules (see convertWorkloadEntry); health is Healthy.
func inlineEndpoints(se *networkingv1.ServiceEntry, ports []model.Port, c convCtx) []*model.Endpoint {
	var out []*model.Endpoint
	for _, w := range se.Spec.Endpoints {
		if w == nil {
			continue
		}
		base := workloadEndpointBase(w, maps.Clone(w.Labels), se.Namespace, c)
		base.Origin = se.Name
		out = append(out, expand(base, w.Ports, ports)...)
	}
	return out
}

// hostEndpoints returns the endpoints of a DNS entry without endpoints
// and without a selector: its host resolves itself, one endpoint per port
// with the host as address, TLS disabled and no labels (as in Istio).
func hostEndpoints(se string, host model.Hostname, ports []model.Port, c convCtx) []*model.Endpoint {
	base := model.Endpoint{Hostname: string(host), Cluster: c.Cluster, Serving: true, Origin: se}
	return expand(base, nil, ports)
}

// workloadEndpoints returns the endpoints a selected workload (a Pod or a
// WorkloadEntry instance) contributes to an entry with the given ports and
// resolution: one per port, in the workload's own cluster (a Pod of another
// cluster stays in its cluster, as in Istio; a workload that names none is
// the registry's). A
// workload addressed by a DNS name or unix path backs DNS entries only, as
// in Istio; for other resolutions it contributes nothing.
func workloadEndpoints(w *model.WorkloadInstance, ports []model.Port, res model.Resolution, c convCtx) []*model.Endpoint {
	if w.Endpoint.Hostname != "" && res != model.DNS && res != model.DNSRoundRobin {
		return nil
	}
	base := w.Endpoint
	if base.Cluster == "" {
		base.Cluster = c.Cluster
	}
	base.WorkloadKind = w.Kind
	base.WorkloadNamespace = w.Namespace
	base.WorkloadName = w.Name
	return expand(base, w.PortMap, ports)
}
