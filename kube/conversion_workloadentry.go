package kube

import "github.com/meshreg/meshreg/model"

// workloadEntrySelected reports whether a Kubernetes Service selects a
// WorkloadEntry instance: same namespace, and the service's selector
// matches the entry's labels. A service without a selector selects
// nothing.
func workloadEntrySelected(svc *model.Service, we *model.WorkloadInstance) bool {
	return we.Kind == model.KindWorkloadEntry && we.Namespace == svc.Namespace &&
		len(svc.Selector) > 0 && model.SelectorMatches(svc.Selector, we.Endpoint.Labels)
}

// workloadEntryReachable reports whether this cluster's clients can reach
// a WorkloadEntry directly, so that its Services may select it: entries of
// the cluster itself, entries on no network in particular, and entries on
// the cluster's network. While the cluster's network is unknown ("") every
// entry is reachable, as in a single-network mesh.
func workloadEntryReachable(we *model.WorkloadInstance, cluster model.ClusterID, network model.NetworkID) bool {
	return we.Endpoint.Cluster == cluster || we.Endpoint.Network == "" || network == "" ||
		we.Endpoint.Network == network
}

// workloadEntryTargetPort returns the port a WorkloadEntry serves a
// service port on: the entry's port named by the service port's named
// targetPort, else the numeric targetPort, else the service port itself.
func workloadEntryTargetPort(p model.Port, portMap map[string]uint32) uint32 {
	if p.TargetPortName != "" {
		if n, ok := portMap[p.TargetPortName]; ok && n != 0 {
			return n
		}
	}
	if p.TargetPort != 0 {
		return p.TargetPort
	}
	return p.Port
}

// workloadEntryEndpoints returns the endpoints a selected WorkloadEntry
// gives a Kubernetes Service, one per service port. They belong to this
// cluster's shard (Cluster = cluster); every other field comes from the
// entry. Entries addressed by hostname give none: a Kubernetes Service's
// endpoints are IPs.
func workloadEntryEndpoints(svc *model.Service, we *model.WorkloadInstance, cluster model.ClusterID) []*model.Endpoint {
	if len(we.Endpoint.Addresses) == 0 {
		return nil
	}
	out := make([]*model.Endpoint, 0, len(svc.Ports))
	for _, p := range svc.Ports {
		ep := we.Endpoint
		ep.Hostname = ""
		ep.Port = workloadEntryTargetPort(p, we.PortMap)
		ep.ServicePortName = p.Name
		ep.Cluster = cluster
		ep.WorkloadKind = model.KindWorkloadEntry
		ep.WorkloadNamespace = we.Namespace
		ep.WorkloadName = we.Name
		out = append(out, &ep)
	}
	return out
}
