package kube

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshreg/meshreg/model"
)

// Network gateways come from the cluster's Services, as Istio finds them
// (ARCHITECTURE.md, "Network gateways"): a Service is a gateway candidate
// when it carries the topology.istio.io/network label or the mesh
// networks name it (see SetMeshNetworks). A NodePort
// candidate with the traffic.istio.io/nodeSelector annotation is reached
// at its nodes' addresses. The candidates are few, so every change to
// one, or to a node while a NodePort candidate exists, converts them all
// again (syncGateways); nothing else is touched.

const (
	// labelGatewayPort names a gateway Service's mTLS port.
	labelGatewayPort = "networking.istio.io/gatewayPort"
	// annotationNodeSelector selects, as a JSON label map, the nodes whose
	// external addresses a NodePort gateway Service is reached at.
	annotationNodeSelector = "traffic.istio.io/nodeSelector"
)

// gatewayDiagnosticsOwner is the store's diagnostics owner of the
// gateways' diagnostics.
const gatewayDiagnosticsOwner = "NetworkGateways"

// isGatewayCandidate reports whether a Service may declare network
// gateways.
func isGatewayCandidate(svc *corev1.Service) bool {
	return svc.Labels[labelNetwork] != ""
}

// isNodePortGateway reports whether a Service is reached at its nodes'
// addresses: a NodePort Service with the node selector annotation.
func isNodePortGateway(svc *corev1.Service) bool {
	_, ok := svc.Annotations[annotationNodeSelector]
	return ok && svc.Spec.Type == corev1.ServiceTypeNodePort
}

// gatewayNode is what a node lends a NodePort gateway: its labels and its
// first external IP.
type gatewayNode struct {
	labels  map[string]string
	address string
}

// nodeGatewayAddress returns a node's first ExternalIP, or "".
func nodeGatewayAddress(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeExternalIP && a.Address != "" {
			return a.Address
		}
	}
	return ""
}

// serviceGateways returns the network gateways a Service declares, and
// what it could not use, as diagnostics:
//
//   - a Service labelled topology.istio.io/network leads into that
//     network on its networking.istio.io/gatewayPort label's port
//     (default 15443), when it has that port, and on 15008 for HBONE,
//     when it has that; a Service with neither is no gateway;
//   - else, named are the gateways the mesh networks give it by
//     registryServiceName, with their ports;
//   - its addresses are its LoadBalancer ingress addresses (each one's
//     IP, else its host name) and its externalIPs; with none, a NodePort
//     gateway's are the first ExternalIP of each node its node selector
//     selects (an unreadable selector selects every node, as in Istio);
//   - a NodePort gateway's ports are their node ports.
//
// nodes holds the nodes that have an external IP.
func serviceGateways(svc *corev1.Service, cluster model.ClusterID, named []model.NetworkGateway, nodes map[string]gatewayNode) ([]model.NetworkGateway, []model.Diagnostic) {
	var diags []model.Diagnostic
	warn := func(format string, args ...any) {
		diags = append(diags, model.Diagnostic{
			Severity: model.Warning, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name,
			Cluster: cluster, Message: fmt.Sprintf(format, args...),
		})
	}
	nodePort := isNodePortGateway(svc)
	var base []model.NetworkGateway
	if network := svc.Labels[labelNetwork]; network != "" {
		base = labelledGateway(svc, network, cluster, nodePort, warn)
	} else {
		for _, gw := range named {
			if sp, ok := servicePort(svc, gw.Port); ok {
				gw.Port = gatewayPortOf(sp, nodePort)
			}
			base = append(base, gw)
		}
	}
	if len(base) == 0 {
		return nil, diags
	}
	addrs := externalAddresses(svc)
	switch {
	case len(addrs) == 0 && nodePort:
		var err error
		addrs, err = nodeAddresses(svc.Annotations[annotationNodeSelector], nodes)
		if err != nil {
			warn("annotation %s is not a JSON label map (%v); every node selected, as in Istio", annotationNodeSelector, err)
		}
		if len(addrs) == 0 {
			warn("gateway of network %s selects no node with an external IP; not a gateway until one does", base[0].Network)
		}
	case len(addrs) == 0:
		warn("gateway of network %s has no address (no LoadBalancer ingress, no externalIPs); not a gateway until it has one", base[0].Network)
	}
	out := make([]model.NetworkGateway, 0, len(addrs)*len(base))
	for _, a := range addrs {
		for _, gw := range base {
			gw.Address = a
			out = append(out, gw)
		}
	}
	return out, diags
}

// labelledGateway returns the gateway, without its address, of a Service
// labelled with a network; nil when it has neither the mTLS nor the HBONE
// port.
func labelledGateway(svc *corev1.Service, network string, cluster model.ClusterID, nodePort bool, warn func(string, ...any)) []model.NetworkGateway {
	port := uint32(model.DefaultGatewayPort)
	if v := svc.Labels[labelGatewayPort]; v != "" {
		p, err := strconv.ParseUint(v, 10, 16)
		if err != nil || p == 0 {
			warn("label %s=%q is not a port number; gateway port %d used", labelGatewayPort, v, model.DefaultGatewayPort)
		} else {
			port = uint32(p)
		}
	}
	mtls, hasMTLS := servicePort(svc, port)
	hbone, hasHBONE := servicePort(svc, model.DefaultHBONEPort)
	if !hasMTLS && !hasHBONE {
		warn("labelled %s=%s but has neither port %d nor port %d; not a gateway", labelNetwork, network, port, model.DefaultHBONEPort)
		return nil
	}
	gw := model.NetworkGateway{Network: model.NetworkID(network), Cluster: cluster, Source: model.GatewayFromService}
	if hasMTLS {
		gw.Port = gatewayPortOf(mtls, nodePort)
	}
	if hasHBONE {
		gw.HBONEPort = gatewayPortOf(hbone, nodePort)
	}
	return []model.NetworkGateway{gw}
}

// servicePort returns the Service's port numbered p.
func servicePort(svc *corev1.Service, p uint32) (corev1.ServicePort, bool) {
	for _, sp := range svc.Spec.Ports {
		if uint32(sp.Port) == p {
			return sp, true
		}
	}
	return corev1.ServicePort{}, false
}

// gatewayPortOf is the port a gateway is reached on: a NodePort
// gateway's node port once allocated, else the service port.
func gatewayPortOf(sp corev1.ServicePort, nodePort bool) uint32 {
	if nodePort && sp.NodePort != 0 {
		return uint32(sp.NodePort)
	}
	return uint32(sp.Port)
}

// nodeAddresses returns the addresses of the nodes a node selector
// annotation selects, sorted. An unreadable selector selects every node,
// and is returned as the error.
func nodeAddresses(selector string, nodes map[string]gatewayNode) ([]string, error) {
	var sel map[string]string
	err := json.Unmarshal([]byte(selector), &sel)
	if err != nil {
		sel = nil
	}
	var out []string
	for _, n := range nodes {
		if (sel == nil || model.SelectorMatches(sel, n.labels)) && !slices.Contains(out, n.address) {
			out = append(out, n.address)
		}
	}
	slices.Sort(out)
	return out, err
}

// markGateways marks the gateways dirty. Before the initial lists are
// in, it does nothing: prime converts them.
func (c *Controller) markGateways() {
	if c.primed {
		c.dirty.gateways = true
	}
}

// hasNodePortGateway reports whether a Service that may declare gateways
// is reached at its nodes' addresses.
func (c *Controller) hasNodePortGateway() bool {
	return slices.ContainsFunc(c.gatewayKeys(), func(k types.NamespacedName) bool {
		svc := c.cl.services[k]
		return svc != nil && isNodePortGateway(svc)
	})
}

// syncGateways converts every gateway candidate of the selected
// namespaces and publishes the gateways and their diagnostics.
func (c *Controller) syncGateways() {
	var gws []model.NetworkGateway
	var diags []model.Diagnostic
	for _, key := range c.gatewayKeys() {
		svc := c.cl.services[key]
		if svc != nil && !c.gatewayNamespace(key.Namespace) {
			diags = append(diags, c.outsideGatewayNamespaces("Service", key))
			continue
		}
		if svc == nil || !c.namespaceSelected(key.Namespace) {
			for _, gw := range c.meshGateways[key] {
				diags = append(diags, model.Diagnostic{
					Severity: model.Warning, Kind: "MeshNetworks", Name: string(gw.Network), Cluster: c.opts.ClusterID,
					Message: fmt.Sprintf("gateway registryServiceName %s names no Service of this cluster; no gateway from it", c.serviceKey(key).Hostname),
				})
			}
			continue
		}
		g, d := serviceGateways(svc, c.opts.ClusterID, c.meshGateways[key], c.cl.gatewayNodes)
		gws = append(gws, g...)
		diags = append(diags, d...)
	}
	for _, key := range slices.SortedFunc(maps.Keys(c.cl.gatewayAPI), compareNames) {
		switch {
		case !c.namespaceSelected(key.Namespace):
		case !c.gatewayNamespace(key.Namespace):
			diags = append(diags, c.outsideGatewayNamespaces("Gateway", key))
		default:
			gws = append(gws, c.cl.gatewayAPI[key]...)
		}
	}
	c.store.SetNetworkGateways(model.SortGateways(gws))
	c.store.SetDiagnostics(gatewayDiagnosticsOwner, diags)
}

// gatewayNamespace reports whether a namespace's objects may declare
// gateways (Options.GatewayNamespaces).
func (c *Controller) gatewayNamespace(ns string) bool {
	return c.opts.GatewayNamespaces == nil || slices.Contains(c.opts.GatewayNamespaces, ns)
}

// outsideGatewayNamespaces is the diagnostic of a gateway candidate that
// Options.GatewayNamespaces leaves out.
func (c *Controller) outsideGatewayNamespaces(kind string, key types.NamespacedName) model.Diagnostic {
	return model.Diagnostic{
		Severity: model.Warning, Kind: kind, Namespace: key.Namespace, Name: key.Name, Cluster: c.opts.ClusterID,
		Message: "declares a network gateway outside the namespaces allowed to (Options.GatewayNamespaces); not a gateway",
	}
}

func compareNames(a, b types.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
