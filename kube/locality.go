package kube

import "github.com/meshreg/meshreg/model"

// nodeLocality returns the locality a node's labels declare, as Istio
// reads them: region and zone from topology.kubernetes.io/region and
// zone, else from the older failure-domain.beta.kubernetes.io/region and
// zone, and the subzone from topology.istio.io/subzone.
func nodeLocality(nodeLabels map[string]string) model.Locality {
	return model.Locality{
		Region:  labelOr(nodeLabels, labelRegion, labelBetaRegion),
		Zone:    labelOr(nodeLabels, labelZone, labelBetaZone),
		Subzone: nodeLabels[labelSubzone],
	}
}

// labelOr returns the value of the first of keys that labels has.
func labelOr(labels map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			return v
		}
	}
	return ""
}

// podLocality returns a pod's locality: the one its labels give
// (model.LocalityLabel); when they give none, the locality of its node.
func podLocality(podLabels map[string]string, node model.Locality) model.Locality {
	if v := model.LocalityLabel(podLabels); v != "" {
		return model.ParseLocality(v)
	}
	return node
}
