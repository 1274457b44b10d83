package kube

import (
	"hash/maphash"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshreg/meshreg/internal/intern"
	"github.com/meshreg/meshreg/model"
)

// Labels and annotations the controller reads or writes.
const (
	// labelLocality on a pod overrides its node's locality (see
	// model.LocalityLabel).
	labelLocality = model.LabelLocality
	// labelRegion and labelZone are the standard node topology labels;
	// labelBetaRegion and labelBetaZone their older forms, read when a
	// node has no standard one.
	labelRegion     = corev1.LabelTopologyRegion
	labelZone       = corev1.LabelTopologyZone
	labelBetaRegion = corev1.LabelFailureDomainBetaRegion
	labelBetaZone   = corev1.LabelFailureDomainBetaZone
	// labelHostname is added to a pod's endpoints: the pod's node.
	labelHostname = corev1.LabelHostname
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
//     known (of a subzone of several levels, the first);
//   - kubernetes.io/hostname: the pod's node, when known.
//
// An added label replaces a label of the same key on the workload, so the
// labels always agree with the endpoint's Locality, Network and Cluster.
// The workload's topology.istio.io/locality label is kept as it is.
// base is not modified.
func endpointLabels(base map[string]string, loc model.Locality, network model.NetworkID, node string, cluster model.ClusterID) map[string]string {
	subzone, _, _ := strings.Cut(loc.Subzone, "/")
	// Size the map exactly: a map of up to 8 entries is one group, while
	// a larger hint allocates a full table (twice the memory for the
	// typical pod with a handful of labels).
	n := len(base) + 1
	for _, v := range [...]string{string(network), loc.Region, loc.Zone, subzone, node} {
		if v != "" {
			n++
		}
	}
	out := make(map[string]string, n)
	maps.Copy(out, base)
	out[labelCluster] = string(cluster)
	for _, l := range [...]struct{ k, v string }{
		{labelNetwork, string(network)}, {labelRegion, loc.Region}, {labelZone, loc.Zone},
		{labelSubzone, subzone}, {labelHostname, node},
	} {
		if l.v != "" {
			out[l.k] = l.v
		}
	}
	return out
}

// labelSharer hands out one endpoint label map per distinct set of
// inputs to endpointLabels (the pod's labels, its locality and network;
// the cluster is the controller's), so that the workloads of pods with
// equal labels on nodes of one topology share it: pods come in replica
// sets, whose pods carry the same labels. A label map is never written
// once made (model values are immutable), so sharing it is safe. The
// initial conversion gives each of its goroutines a sharer of its own
// (see memoizePods); a nil sharer shares nothing.
type labelSharer struct {
	seed   maphash.Seed
	byHash map[uint64][]sharedLabels
}

// sharedLabels is one map handed out, with what it was made from.
type sharedLabels struct {
	base map[string]string
	topo labelTopology
	out  map[string]string
}

// labelTopology is what endpointLabels adds to a workload's labels but
// the cluster, which is the controller's.
type labelTopology struct {
	loc     model.Locality
	network model.NetworkID
	node    string
}

func newLabelSharer() *labelSharer {
	return &labelSharer{seed: maphash.MakeSeed(), byHash: map[uint64][]sharedLabels{}}
}

// labels returns endpointLabels(base, loc, network, node, cluster), the
// map handed out before for equal inputs when there is one. cluster must
// be the same on every call.
func (s *labelSharer) labels(base map[string]string, loc model.Locality, network model.NetworkID, node string, cluster model.ClusterID) map[string]string {
	if s == nil {
		return endpointLabels(base, loc, network, node, cluster)
	}
	topo := labelTopology{loc: loc, network: network, node: node}
	h := s.hash(base, topo)
	for _, e := range s.byHash[h] {
		if e.topo == topo && maps.Equal(e.base, base) {
			return e.out
		}
	}
	out := endpointLabels(base, loc, network, node, cluster)
	s.byHash[h] = append(s.byHash[h], sharedLabels{base: base, topo: topo, out: out})
	return out
}

// hash hashes endpointLabels's inputs, the labels in any order.
func (s *labelSharer) hash(base map[string]string, topo labelTopology) uint64 {
	return intern.Hash(s.seed, base) ^ maphash.Comparable(s.seed, topo)
}
