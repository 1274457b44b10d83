package kube

import "github.com/meshreg/meshreg/model"

// hintsAllOrNothing applies Kubernetes' rule for topology hints (kube-proxy
// uses a kind of hint only when every ready endpoint has one): a kind of
// hint that a Healthy endpoint of the service lacks is dropped from every
// endpoint. The endpoints that change are copied; the memo keeps the
// endpoints with their slices' hints.
func hintsAllOrNothing(eps []*model.Endpoint) []*model.Endpoint {
	some, zones, nodes := false, true, true
	for _, ep := range eps {
		some = some || ep.Hints != nil
		if ep.Health == model.Healthy {
			zones = zones && ep.Hints != nil && len(ep.Hints.ForZones) > 0
			nodes = nodes && ep.Hints != nil && len(ep.Hints.ForNodes) > 0
		}
	}
	if !some || zones && nodes {
		return eps
	}
	kept := map[*model.Hints]*model.Hints{} // one copy per shared hints value
	for i, ep := range eps {
		if ep.Hints == nil {
			continue
		}
		h, ok := kept[ep.Hints]
		if !ok {
			h = &model.Hints{}
			if zones {
				h.ForZones = ep.Hints.ForZones
			}
			if nodes {
				h.ForNodes = ep.Hints.ForNodes
			}
			if h.IsZero() {
				h = nil
			}
			kept[ep.Hints] = h
		}
		cp := *ep
		cp.Hints = h
		eps[i] = &cp
	}
	return eps
}
