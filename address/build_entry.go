package address

import (
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// entryRef names a ServiceEntry: its namespace and name.
type entryRef struct{ ns, name string }

// hostEndpoints is one host of a ServiceEntry with its endpoints.
type hostEndpoints struct {
	svc *model.Service
	eps []*model.Endpoint
}

// entryWorkloads builds the workloads of a ServiceEntry's own endpoints
// (spec.endpoints; or, for a DNS entry with neither endpoints nor a
// workloadSelector, one per host, addressed by the host name): one per
// address, serving every host of the entry (a host's own for the
// implicit ones). Endpoints of selected Pods and WorkloadEntries are
// theirs, not the entry's.
func (b *builder) entryWorkloads(ref entryRef, hosts []hostEndpoints) []*workloadapi.Workload {
	byAddr := map[string]*workloadapi.Workload{}
	var order []string
	for _, h := range hosts {
		if h.svc.Visibility == model.VisibilityNone {
			continue // it configures no proxy
		}
		eps := h.eps
		if h.svc.Resolution == model.DynamicDNS && h.svc.Selector == nil {
			eps = implicitEndpoints(ref, h.svc, b.opts.ConfigCluster)
		}
		for _, ep := range eps {
			// Another entry's endpoints merged into the host the entry
			// won are not the entry's: Istio drops the loser's.
			if ep.WorkloadKind != 0 || ep.Origin != ref.name {
				continue
			}
			addr := ep.Address()
			implicit := len(ep.Addresses) == 0 && ep.Hostname == string(h.svc.Hostname) && h.svc.Selector == nil
			uid := serviceEntryUID(ep.Cluster, ref.ns, ref.name, addr)
			w := byAddr[uid]
			if w == nil {
				w = b.entryWorkload(ref, h.svc, ep, uid, implicit)
				byAddr[uid] = w
				order = append(order, uid)
			}
			key := serviceKey(h.svc.Namespace, string(h.svc.Hostname))
			pl := w.Services[key]
			if pl == nil {
				pl = &workloadapi.PortList{}
				w.Services[key] = pl
			}
			if p, ok := h.svc.PortByName(ep.ServicePortName); ok {
				pl.Ports = append(pl.Ports, &workloadapi.Port{ServicePort: p.Port, TargetPort: ep.Port})
			}
		}
	}
	out := make([]*workloadapi.Workload, 0, len(order))
	for _, uid := range order {
		w := byAddr[uid]
		for _, pl := range w.Services {
			sortPorts(pl, hosts)
		}
		out = append(out, w)
	}
	return out
}

func (b *builder) entryWorkload(ref entryRef, svc *model.Service, ep *model.Endpoint, uid string, implicit bool) *workloadapi.Workload {
	w := &workloadapi.Workload{
		Uid:            uid,
		Name:           ref.name,
		Namespace:      ref.ns,
		Network:        string(b.network(ep)),
		NetworkGateway: b.gateway(b.network(ep)),
		ClusterId:      string(ep.Cluster),
		ServiceAccount: serviceAccountName(ep.ServiceAccount),
		Status:         workloadapi.WorkloadStatus_HEALTHY,
		TrustDomain:    b.trustDomain(),
		Locality:       locality(ep.Locality),
		WorkloadName:   ref.name,
		WorkloadType:   workloadapi.WorkloadType_POD,
		Services:       map[string]*workloadapi.PortList{},
	}
	if ep.Weight > 0 {
		w.Capacity = wrapperspb.UInt32(ep.Weight)
	}
	for _, a := range ep.Addresses {
		w.Addresses = append(w.Addresses, a.AsSlice())
	}
	if len(ep.Addresses) == 0 {
		w.Hostname = ep.Hostname
	}
	if !implicit {
		if wp, _ := workloadWaypoint(b.meta, ep.Cluster, ref.ns, ep.Labels); wp != nil {
			w.Waypoint = wp.Address
		}
	}
	w.CanonicalName, w.CanonicalRevision = canonical(svc.Labels, ref.name)
	setTunnel(w, svc.Labels, false)
	return w
}

// implicitEndpoints are the endpoints a DYNAMIC_DNS entry's host gives
// it in the ambient index, as a DNS entry's host does in the registry:
// the host itself, on each port's target port (else the port).
func implicitEndpoints(ref entryRef, svc *model.Service, cluster model.ClusterID) []*model.Endpoint {
	out := make([]*model.Endpoint, 0, len(svc.Ports))
	for _, p := range svc.Ports {
		port := p.TargetPort
		if port == 0 {
			port = p.Port
		}
		out = append(out, &model.Endpoint{Hostname: string(svc.Hostname), Port: port, ServicePortName: p.Name,
			Cluster: cluster, Origin: ref.name})
	}
	return out
}

// sortPorts puts a port list in its service's port order.
func sortPorts(pl *workloadapi.PortList, hosts []hostEndpoints) {
	if len(pl.Ports) < 2 {
		return
	}
	order := map[uint32]int{}
	for _, h := range hosts {
		for i, p := range h.svc.Ports {
			if _, ok := order[p.Port]; !ok {
				order[p.Port] = i
			}
		}
	}
	ports := pl.Ports
	for i := 1; i < len(ports); i++ {
		for j := i; j > 0 && order[ports[j].ServicePort] < order[ports[j-1].ServicePort]; j-- {
			ports[j], ports[j-1] = ports[j-1], ports[j]
		}
	}
}
