package kube

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshreg/meshreg/model"
)

// Labels and annotations the controller reads or writes.
const (
	// labelLocality on a pod overrides its node's locality; the value is
	// "region.zone.subzone" ('.' because a label value cannot hold '/').
	labelLocality = "topology.istio.io/locality"
	// labelRegion and labelZone are the standard node topology labels.
	labelRegion = corev1.LabelTopologyRegion
	labelZone   = corev1.LabelTopologyZone
	// labelSubzone is Istio's node label for a subzone.
	labelSubzone = "topology.istio.io/subzone"
	// labelNetwork names a pod's network, or on the system namespace the
	// cluster's network.
	labelNetwork = "topology.istio.io/network"
	// labelCluster is added to every endpoint: the cluster ID.
	labelCluster = "topology.istio.io/cluster"
	// labelTLSMode says whether a pod accepts Istio mutual TLS.
	labelTLSMode = "security.istio.io/tlsMode"

	annotationExportTo                  = "networking.istio.io/exportTo"
	annotationCanonicalServiceAccounts  = "alpha.istio.io/canonical-serviceaccounts"
	annotationKubernetesServiceAccounts = "alpha.istio.io/kubernetes-serviceaccounts"
)

// endpointLabels returns the labels of an endpoint or pod workload: the
// workload's own labels plus the topology labels the registry adds, as
// Istio does:
//
//   - topology.istio.io/cluster: always, the cluster ID;
//   - topology.istio.io/network: when the network is known;
//   - topology.kubernetes.io/region, topology.kubernetes.io/zone and
//     topology.istio.io/subzone: each when that part of the locality is
//     known.
//
// An added label replaces a label of the same key on the workload, so the
// labels always agree with the endpoint's Locality, Network and Cluster.
// The workload's topology.istio.io/locality label is kept as it is.
// base is not modified.
func endpointLabels(base map[string]string, loc model.Locality, network model.NetworkID, cluster model.ClusterID) map[string]string {
	// Size the map exactly: a map of up to 8 entries is one group, while
	// a larger hint allocates a full table (twice the memory for the
	// typical pod with a handful of labels).
	n := len(base) + 1
	for _, v := range [...]string{string(network), loc.Region, loc.Zone, loc.Subzone} {
		if v != "" {
			n++
		}
	}
	out := make(map[string]string, n)
	maps.Copy(out, base)
	out[labelCluster] = string(cluster)
	if network != "" {
		out[labelNetwork] = string(network)
	}
	if loc.Region != "" {
		out[labelRegion] = loc.Region
	}
	if loc.Zone != "" {
		out[labelZone] = loc.Zone
	}
	if loc.Subzone != "" {
		out[labelSubzone] = loc.Subzone
	}
	return out
}
