package kube

import "github.com/meshreg/meshreg/model"

// nodeLocality returns the locality a node's labels declare:
// topology.kubernetes.io/region and zone, and topology.istio.io/subzone.
func nodeLocality(nodeLabels map[string]string) model.Locality {
	return model.Locality{
		Region:  nodeLabels[labelRegion],
		Zone:    nodeLabels[labelZone],
		Subzone: nodeLabels[labelSubzone],
	}
}

// podLocality returns a pod's locality: its topology.istio.io/locality
// label when set (parts separated by '.'), else the locality of its node.
func podLocality(podLabels map[string]string, node model.Locality) model.Locality {
	if v := podLabels[labelLocality]; v != "" {
		return model.ParseLocality(v)
	}
	return node
}
