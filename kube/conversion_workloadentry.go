package kube

import "github.com/meshreg/meshreg/model"

// workloadEntrySelected reports whether a Kubernetes Service selects a
// WorkloadEntry instance, as Istio decides it: a ClientSideLB Service
// (not headless, not ExternalName) with a selector, of the entry's
// namespace, whose selector matches the entry's labels.
func workloadEntrySelected(svc *model.Service, we *model.WorkloadInstance) bool {
	return we.Kind == model.KindWorkloadEntry && we.Namespace == svc.Namespace &&
		svc.Resolution == model.ClientSideLB && !svc.MeshExternal &&
		len(svc.Selector) > 0 && model.SelectorMatches(svc.Selector, we.Endpoint.Labels)
}

// workloadEntryReachable reports whether this cluster's clients can reach
// a WorkloadEntry directly, so that its Services may select it: entries of
// the cluster itself, entries on no network in particular, and entries on
// the cluster's network. While the cluster's network is unknown ("") every
// entry is reachable, as in a single-network mesh. (Only an aggregate
// that shares WorkloadEntries across clusters hands a kube controller the
// entries of another cluster: see aggregate.Options.ShareWorkload.)
func workloadEntryReachable(we *model.WorkloadInstance, cluster model.ClusterID, network model.NetworkID) bool {
	return we.Endpoint.Cluster == cluster || we.Endpoint.Network == "" || network == "" ||
		we.Endpoint.Network == network
}

// workloadEntryTargetPort returns the port a WorkloadEntry serves a
// service port on, as Istio decides it, and false when the entry does not
// serve the port:
//
//   - a named targetPort: the entry's port of that name; an entry whose
//     ports lack it does not serve the port;
//   - a numeric targetPort: the entry's port named like the service port,
//     else the targetPort;
//   - no targetPort: the service port itself.
func workloadEntryTargetPort(p model.Port, portMap map[string]uint32) (uint32, bool) {
	switch {
	case p.TargetPortName != "":
		n := portMap[p.TargetPortName]
		return n, n != 0
	case p.TargetPort != 0:
		if n := portMap[p.Name]; n != 0 {
			return n, true
		}
		return p.TargetPort, true
	}
	return p.Port, true
}

// workloadEntryEndpoints returns the endpoints a selected WorkloadEntry
// gives a Kubernetes Service, one per service port it serves. They belong
// to this cluster's shard (Cluster = cluster); every other field comes
// from the entry. An entry without an address, on a network of its own,
// gives endpoints without one (reached through that network's gateway).
// Entries addressed by hostname or unix socket give none: a Kubernetes
// Service's endpoints are IPs.
func workloadEntryEndpoints(svc *model.Service, we *model.WorkloadInstance, cluster model.ClusterID) []*model.Endpoint {
	if we.Endpoint.Hostname != "" {
		return nil
	}
	out := make([]*model.Endpoint, 0, len(svc.Ports))
	for _, p := range svc.Ports {
		port, ok := workloadEntryTargetPort(p, we.PortMap)
		if !ok {
			continue
		}
		ep := we.Endpoint
		ep.Port = port
		ep.ServicePortName = p.Name
		ep.Cluster = cluster
		ep.WorkloadKind = model.KindWorkloadEntry
		ep.WorkloadNamespace = we.Namespace
		ep.WorkloadName = we.Name
		out = append(out, &ep)
	}
	return out
}
