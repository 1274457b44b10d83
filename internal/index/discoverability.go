package index

import "github.com/meshreg/meshreg/model"

// Recast is a list of endpoints that are another list's with another
// discoverability: a Service's endpoints as its ClusterSet host has them
// (Kubernetes Multi-Cluster Services). It keeps the copies it made, so
// that the next list reuses the copy of an endpoint that did not change,
// and its consumers may compare pointers as they do for any registry's
// lists. The zero value holds none. Not safe for concurrent use.
type Recast struct {
	from, eps []*model.Endpoint
}

// Apply returns src's endpoints, in src's order, each with
// discoverability d: src itself when they all have it (no copy, so a
// list and its recast share their endpoints), else a new list whose
// endpoints that lack it are copies, the previous Apply's copy of the
// same endpoint (the same pointer) where it made one. src is read only.
func (r *Recast) Apply(src []*model.Endpoint, d model.Discoverability) []*model.Endpoint {
	i := 0
	for i < len(src) && src[i].Discoverability == d {
		i++
	}
	if i == len(src) {
		r.from, r.eps = nil, nil
		return src
	}
	var prev map[*model.Endpoint]*model.Endpoint
	from, eps := make([]*model.Endpoint, 0, len(src)), make([]*model.Endpoint, 0, len(src))
	out := make([]*model.Endpoint, len(src))
	copy(out, src[:i])
	j := 0 // the cursor in r.from, which was in src's order too
	for ; i < len(src); i++ {
		ep := src[i]
		if ep.Discoverability == d {
			out[i] = ep
			continue
		}
		var c *model.Endpoint
		switch {
		case j < len(r.from) && r.from[j] == ep:
			c = r.eps[j]
			j++
		default:
			if prev == nil {
				prev = make(map[*model.Endpoint]*model.Endpoint, len(r.from))
				for k, f := range r.from {
					prev[f] = r.eps[k]
				}
			}
			c = prev[ep]
		}
		if c == nil {
			n := *ep
			n.Discoverability = d
			c = &n
		}
		from, eps = append(from, ep), append(eps, c)
		out[i] = c
	}
	r.from, r.eps = from, eps
	return out
}
