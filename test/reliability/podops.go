package reliability

import (
	"fmt"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// The generator's operations on EndpointSlices and pods.

// sliceOp writes a new slice, deletes one, changes the conditions of one
// of its endpoints, or moves an endpoint from one slice of a service to
// another.
func (g *gen) sliceOp(c model.ClusterID, ns string, del bool) string {
	svc := pick(g.r, poolServices)
	name := svc + "-" + pick(g.r, poolSlices)
	key := SliceSpec{Namespace: ns, Name: name}.Key()
	if del {
		delete(g.slices[c], key)
		return g.set(c, key, "", true)
	}
	var existing []string // slices with endpoints, in key order
	for _, k := range sortedKeys(g.slices[c]) {
		if len(g.slices[c][k].Endpoints) > 0 {
			existing = append(existing, k)
		}
	}
	if len(existing) > 0 && g.r.IntN(3) == 0 {
		// The conditions of one endpoint of an existing slice alone:
		// its service's health is patched rather than recomputed, when
		// nothing joins its addresses.
		key := pick(g.r, existing)
		cur := g.slices[c][key]
		i := g.r.IntN(len(cur.Endpoints))
		cur.Endpoints = slices.Clone(cur.Endpoints)
		ep := &cur.Endpoints[i]
		ep.Ready = !ep.Ready
		ep.Serving = ep.Ready || g.r.IntN(2) == 0
		ep.Terminating = !ep.Ready && g.r.IntN(2) == 0
		g.slices[c][key] = cur
		g.world.Set(c, key, cur.YAML())
		return fmt.Sprintf("%s: %s's endpoint %s ready=%v serving=%v terminating=%v", c, key, ep.IP, ep.Ready, ep.Serving, ep.Terminating)
	}
	if cur, ok := g.slices[c][key]; ok && len(cur.Endpoints) > 0 && g.r.IntN(2) == 0 {
		// Move one endpoint to the service's other slice.
		i := g.r.IntN(len(cur.Endpoints))
		ep := cur.Endpoints[i]
		cur.Endpoints = slices.Delete(slices.Clone(cur.Endpoints), i, i+1)
		otherName := svc + "-" + poolSlices[0]
		if otherName == name {
			otherName = svc + "-" + poolSlices[1]
		}
		other := SliceSpec{Namespace: ns, Name: otherName, Service: svc, PortName: cur.PortName, Port: cur.Port}
		if o, ok := g.slices[c][other.Key()]; ok {
			other = o
		}
		other.Endpoints = append(slices.Clone(other.Endpoints), ep)
		g.slices[c][key], g.slices[c][other.Key()] = cur, other
		g.world.Set(c, key, cur.YAML())
		g.world.Set(c, other.Key(), other.YAML())
		return fmt.Sprintf("%s: move %s from %s to %s", c, ep.IP, key, other.Key())
	}
	s := SliceSpec{Namespace: ns, Name: name, Service: svc, PortName: pick(g.r, []string{"http", "grpc", "tcp"}), Port: 8080}
	seen := map[string]bool{}
	for range g.r.IntN(4) {
		ep := SliceEndpoint{Node: pick(g.r, append([]string{""}, poolNodes...))}
		ep.Ready = g.r.IntN(4) != 0
		ep.Serving = ep.Ready || g.r.IntN(2) == 0
		ep.Terminating = !ep.Ready && g.r.IntN(2) == 0
		// Mostly an existing pod of the namespace, at its IP; else any
		// IP, naming a pod or none.
		if pods := g.podsIn(c, ns); len(pods) > 0 && g.r.IntN(3) != 0 {
			p := pick(g.r, pods)
			ep.IP, ep.Pod = p.IP, p.Name
			if ep.IP == "" {
				ep.IP = pick(g.r, poolIPs)
			}
		} else {
			ep.IP = pick(g.r, poolIPs)
			if g.r.IntN(2) == 0 {
				ep.Pod = g.podName(c, pick(g.r, poolPods))
			}
		}
		if seen[ep.IP] {
			continue
		}
		seen[ep.IP] = true
		s.Endpoints = append(s.Endpoints, ep)
	}
	g.slices[c][key] = s
	return g.set(c, key, s.YAML(), false)
}

// namedPods returns the live pods of a namespace that a slice of an
// existing service of the namespace names, in key order.
func (g *gen) namedPods(c model.ClusterID, ns string) []PodSpec {
	names := map[string]bool{}
	for _, s := range g.slices[c] {
		if s.Namespace == ns && g.world.Objects[c][ServiceSpec{Namespace: ns, Name: s.Service}.Key()] != "" {
			for _, e := range s.Endpoints {
				names[e.Pod] = true
			}
		}
	}
	var out []PodSpec
	for _, p := range g.podsIn(c, ns) {
		if names[p.Name] && !p.Terminal && p.IP != "" {
			out = append(out, p)
		}
	}
	return out
}

func (g *gen) podsIn(c model.ClusterID, ns string) []PodSpec {
	var out []PodSpec
	for _, k := range sortedKeys(g.pods[c]) {
		if p := g.pods[c][k]; p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// backedOp writes a service, two live pods of its namespace, and a slice
// naming both (one at its IP, one at another address): a world where a
// pod's metadata change patches the service's endpoints rather than
// recomputing them. Random operations alone seldom line the three up.
func (g *gen) backedOp(c model.ClusterID, ns string) string {
	nsSpec := NamespaceSpec{Name: ns, Selected: true}
	g.world.Set(c, nsSpec.Key(), nsSpec.YAML())
	svc := ServiceSpec{Namespace: ns, Name: pick(g.r, poolServices), VIP: pick(g.r, poolVIPs), PortName: "http", Port: 80, TargetPort: 8080}
	g.world.Set(c, svc.Key(), svc.YAML())
	slice := SliceSpec{Namespace: ns, Name: svc.Name + "-" + pick(g.r, poolSlices), Service: svc.Name, PortName: "http", Port: 8080}
	for i, name := range poolPods[:2] {
		p := PodSpec{Namespace: ns, Name: g.podName(c, name), App: pick(g.r, poolApps), IP: poolIPs[i], Node: pick(g.r, poolNodes), Ready: true}
		g.pods[c][p.Key()] = p
		g.world.Set(c, p.Key(), p.YAML())
		ep := SliceEndpoint{IP: p.IP, Pod: p.Name, Node: p.Node, Ready: true, Serving: true}
		if i == 1 {
			ep.IP = poolIPs[len(poolIPs)-1] // the pod's targetRef at another address
		}
		slice.Endpoints = append(slice.Endpoints, ep)
	}
	g.slices[c][slice.Key()] = slice
	g.world.Set(c, slice.Key(), slice.YAML())
	return fmt.Sprintf("%s: put %s with a slice naming its pods", c, svc.Key())
}

// podOp writes a new pod, deletes one, changes the metadata of a pod that
// a slice of an existing service names, or flips an existing pod's
// readiness, IP or phase.
func (g *gen) podOp(c model.ClusterID, ns string, del bool) string {
	if named := g.namedPods(c, ns); !del && len(named) > 0 && g.r.IntN(3) == 0 {
		// Metadata alone: the pod keeps its IP, node and phase, so the
		// endpoints it backs are patched rather than recomputed.
		p := pick(g.r, named)
		p.App, p.ServiceAccount = pick(g.r, poolApps), pick(g.r, []string{"", "sa1"})
		p.Locality, p.Network, p.TLS = pick(g.r, []string{"", "", "lr/lz"}), pick(g.r, poolNetworks), g.r.IntN(2) == 0
		g.pods[c][p.Key()] = p
		return g.set(c, p.Key(), p.YAML(), false)
	}
	key := PodSpec{Namespace: ns, Name: g.podName(c, pick(g.r, poolPods))}.Key()
	if del {
		delete(g.pods[c], key)
		return g.set(c, key, "", true)
	}
	p, ok := g.pods[c][key]
	switch {
	case ok && g.r.IntN(3) == 0:
		p.Ready = !p.Ready
	case ok && g.r.IntN(3) == 0:
		p.IP = pick(g.r, poolIPs) // IP reuse: may be another pod's
	case ok && g.r.IntN(6) == 0:
		p.Terminal = true
		p.Ready = false
	default:
		p = PodSpec{
			Namespace: ns, Name: p.Name, App: pick(g.r, poolApps), IP: pick(g.r, append([]string{""}, poolIPs...)),
			Node: pick(g.r, poolNodes), Ready: g.r.IntN(4) != 0, ServiceAccount: pick(g.r, []string{"", "sa1"}),
			Locality: pick(g.r, []string{"", "", "lr/lz"}), Network: pick(g.r, poolNetworks), TLS: g.r.IntN(2) == 0,
		}
		_, p.Name, _ = cutKey(key)
	}
	g.pods[c][key] = p
	return g.set(c, key, p.YAML(), false)
}
