package proxyview

import (
	"net/netip"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// Inbound returns the service ports the proxy's own IPs serve: every
// endpoint at one of Proxy.IPs yields its service and port. It is scoped
// as Istio scopes it: to services of the proxy's namespace (when it has
// one), so that a workload cannot be made to back another namespace's
// services, and for Kubernetes Services to endpoints of the proxy's
// cluster (when it has one); ServiceEntry endpoints count from any
// cluster. Targets are sorted by hostname, namespace and port, without
// duplicates.
//
// Unlike a Snapshot's answers, Inbound is the source's current state: the
// source's own IP index answers it (registry.Discovery.ProxyTargets), so
// the view keeps none. The result is the caller's; the services are
// shared.
func (v *View) Inbound(p *Proxy) []model.ServiceTarget {
	if len(p.IPs) == 0 {
		return nil
	}
	ips := make([]netip.Addr, len(p.IPs))
	for i, ip := range p.IPs {
		ips[i] = ip.Unmap()
	}
	return v.src.ProxyTargets(registry.ProxyQuery{IPs: ips, Namespace: p.Namespace, Cluster: p.Cluster})
}
