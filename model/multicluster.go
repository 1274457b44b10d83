package model

import (
	"fmt"
	"strings"
)

// Kubernetes Multi-Cluster Services (the MCS API, multicluster.x-k8s.io):
// a ServiceExport makes a cluster's Service part of its ClusterSet, a
// ServiceImport stands for the ClusterSet's service in a cluster, under
// the name name.namespace.svc.clusterset.local.

// ClusterSetDomain is the DNS zone of the MCS API's ClusterSet services.
const ClusterSetDomain = "clusterset.local"

// clusterSetSuffix ends every ClusterSet service hostname.
const clusterSetSuffix = ".svc." + ClusterSetDomain

// ClusterSetHostname returns the hostname of the ClusterSet service that
// imports the Kubernetes Service of that name and namespace:
// name.namespace.svc.clusterset.local.
func ClusterSetHostname(name, namespace string) Hostname {
	return Hostname(name + "." + namespace + clusterSetSuffix)
}

// IsClusterSet reports whether h is a ClusterSet service's hostname
// (name.namespace.svc.clusterset.local).
func (h Hostname) IsClusterSet() bool {
	return strings.HasSuffix(string(h), clusterSetSuffix) && len(h) > len(clusterSetSuffix)
}

// Discoverability says which proxies may be sent an endpoint. The zero
// value is AlwaysDiscoverable.
type Discoverability uint8

// Discoverabilities, as Istio's endpoint discoverability policies.
const (
	// AlwaysDiscoverable: any proxy of the mesh.
	AlwaysDiscoverable Discoverability = iota
	// DiscoverableFromSameCluster: only the proxies of the endpoint's
	// own cluster (Endpoint.Cluster). A Service's endpoints are so in a
	// cluster that does not export it, when MCS service discovery is on,
	// and every endpoint of a cluster.local host in MCS cluster-local
	// mode.
	DiscoverableFromSameCluster
)

// String returns AlwaysDiscoverable or DiscoverableFromSameCluster, the
// names of Istio's policies and of the dump.
func (d Discoverability) String() string {
	switch d {
	case AlwaysDiscoverable:
		return "AlwaysDiscoverable"
	case DiscoverableFromSameCluster:
		return "DiscoverableFromSameCluster"
	}
	return fmt.Sprintf("Discoverability(%d)", uint8(d))
}

// DiscoverableFrom reports whether the endpoint may be sent to a proxy of
// the given cluster. A proxy of an unknown cluster ("") is sent only the
// endpoints that are always discoverable.
func (e *Endpoint) DiscoverableFrom(cluster ClusterID) bool {
	return e.Discoverability != DiscoverableFromSameCluster || (cluster != "" && cluster == e.Cluster)
}
