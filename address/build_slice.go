package address

import (
	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// sliceWorkloads builds the workloads of a Kubernetes Service's slice
// endpoints that name no Pod, as Istio does for manually managed slices:
// one per slice and address, named by the slice, serving only that
// Service's TCP ports, Healthy when ready, on the host network (their
// address may be shared), with no identity, waypoint or locality.
func (b *builder) sliceWorkloads(svc *model.Service, eps []*model.Endpoint) []*workloadapi.Workload {
	if svc == nil || svc.Provider != model.Kubernetes {
		return nil
	}
	key := serviceKey(svc.Namespace, string(svc.Hostname))
	byUID := map[string]*workloadapi.Workload{}
	var order []string
	for _, ep := range eps {
		if ep.Origin == "" || len(ep.Addresses) == 0 || !b.scope.selects(svc, ep.Cluster) {
			continue // a pod's, or of a cluster whose version of the Service the index does not hold
		}
		uid := string(ep.Cluster) + "/discovery.k8s.io/EndpointSlice/" + svc.Namespace + "/" + ep.Origin + "/" + ep.Addresses[0].String()
		w := byUID[uid]
		if w == nil {
			w = &workloadapi.Workload{
				Uid:         uid,
				Name:        ep.Origin,
				Namespace:   svc.Namespace,
				Network:     string(ep.Network),
				TrustDomain: b.trustDomain(),
				Services:    map[string]*workloadapi.PortList{key: {}},
				Status:      workloadapi.WorkloadStatus_HEALTHY,
				ClusterId:   string(ep.Cluster),
				NetworkMode: workloadapi.NetworkMode_HOST_NETWORK,
			}
			for _, a := range ep.Addresses {
				w.Addresses = append(w.Addresses, a.AsSlice())
			}
			if ep.Health != model.Healthy {
				w.Status = workloadapi.WorkloadStatus_UNHEALTHY
			}
			byUID[uid] = w
			order = append(order, uid)
		}
		p, ok := svc.PortByName(ep.ServicePortName)
		if !ok || p.Protocol == model.UDP {
			continue
		}
		pl := w.Services[key]
		pl.Ports = append(pl.Ports, &workloadapi.Port{ServicePort: p.Port, TargetPort: ep.Port})
	}
	out := make([]*workloadapi.Workload, 0, len(order))
	for _, uid := range order {
		out = append(out, byUID[uid])
	}
	return out
}

// targetRefPods returns the pods a service's endpoints name by targetRef.
func targetRefPods(eps []*model.Endpoint) []model.WorkloadKey {
	var out []model.WorkloadKey
	seen := map[model.WorkloadKey]bool{}
	for _, ep := range eps {
		if ep.WorkloadKind != model.KindPod || ep.Origin != "" {
			continue
		}
		k := model.WorkloadKey{Cluster: ep.Cluster, Kind: model.KindPod, Namespace: ep.WorkloadNamespace, Name: ep.WorkloadName}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
