package proxyview

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// target is one endpoint at an IP, as the inbound index holds it.
type target struct {
	key        model.ServiceKey
	port       string // service port name
	targetPort uint32
	cluster    model.ClusterID
}

// Inbound returns the service ports the proxy's own IPs serve: every
// endpoint at one of Proxy.IPs yields its service and port. It is scoped
// as Istio scopes it: to services of the proxy's namespace (when it has
// one), so that a workload cannot be made to back another namespace's
// services, and for Kubernetes Services to endpoints of the proxy's
// cluster (when it has one); ServiceEntry endpoints count from any
// cluster. Targets are sorted by hostname, namespace and port, without
// duplicates. The result is the caller's; the services are shared.
func (s *Snapshot) Inbound(p *Proxy) []model.ServiceTarget {
	var out []model.ServiceTarget
	for _, ip := range p.IPs {
		ts, _ := s.ips.Get(ip.Unmap())
		for _, t := range ts {
			e, ok := s.services.Get(t.key)
			if !ok {
				continue
			}
			svc := e.svc
			if (p.Namespace != "" && svc.Namespace != p.Namespace) || svc.Hostname.IsClusterSet() {
				continue
			}
			if svc.Provider == model.Kubernetes && p.Cluster != "" && t.cluster != p.Cluster {
				continue
			}
			port, ok := svc.PortByName(t.port)
			if !ok {
				continue
			}
			out = append(out, model.ServiceTarget{Service: svc, Port: port, TargetPort: t.targetPort})
		}
	}
	slices.SortFunc(out, compareTargets)
	return slices.CompactFunc(out, func(a, b model.ServiceTarget) bool { return compareTargets(a, b) == 0 })
}

func compareTargets(a, b model.ServiceTarget) int {
	return cmp.Or(
		a.Service.Key().Compare(b.Service.Key()),
		cmp.Compare(a.Port.Port, b.Port.Port),
		cmp.Compare(a.TargetPort, b.TargetPort),
	)
}

// targetsOf returns the inbound index's entries for one service's
// endpoints, by IP.
func targetsOf(key model.ServiceKey, eps []*model.Endpoint) map[netip.Addr][]target {
	out := map[netip.Addr][]target{}
	for _, ep := range eps {
		for _, a := range ep.Addresses {
			a = a.Unmap()
			out[a] = append(out[a], target{key: key, port: ep.ServicePortName, targetPort: ep.Port, cluster: ep.Cluster})
		}
	}
	return out
}
