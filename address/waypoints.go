package address

import (
	"fmt"
	"strconv"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/model"
)

// Values of gateway.istio.io/managed on a waypoint's or east-west
// gateway's own Service: such a Service never uses a waypoint.
const (
	managedByMesh     = "istio.io-mesh-controller"
	managedByEastWest = "istio.io-eastwest-controller"
)

// waypointFor resolves the waypoint an object of namespace ns with the
// given labels uses, as Istio does: its own istio.io/use-waypoint label
// (with istio.io/use-waypoint-namespace), "none" opting out; else its
// namespace's. A waypoint named but not there, or that does not admit
// the namespace, yields no waypoint and a reason.
func waypointFor(m *meta, c model.ClusterID, ns string, objLabels map[string]string) (w *Waypoint, own bool, problem string) {
	if name, ok := objLabels[labelUseWaypoint]; ok {
		if name == "none" {
			return nil, true, ""
		}
		wns := ns
		if v, ok := objLabels[labelUseWaypointNamespace]; ok {
			wns = v
		}
		w, problem := resolveWaypoint(m, c, ns, wns, name)
		return w, true, problem
	}
	n := m.namespace(c, ns)
	if n == nil {
		return nil, false, ""
	}
	name, ok := n.Labels[labelUseWaypoint]
	if !ok || name == "none" {
		return nil, false, ""
	}
	wns := ns
	if v, ok := n.Labels[labelUseWaypointNamespace]; ok {
		wns = v
	}
	w, problem = resolveWaypoint(m, c, ns, wns, name)
	return w, false, problem
}

func resolveWaypoint(m *meta, c model.ClusterID, ns, wns, name string) (*Waypoint, string) {
	w := m.waypoint(c, wns, name)
	if w == nil {
		return nil, fmt.Sprintf("waypoint %s/%s is not ready (no Gateway with an address)", wns, name)
	}
	var nsLabels map[string]string
	if n := m.namespace(c, ns); n != nil {
		nsLabels = n.Labels
	}
	if !w.admits(ns, nsLabels) {
		return nil, fmt.Sprintf("waypoint %s/%s does not admit namespace %s", wns, name, ns)
	}
	return w, ""
}

// instanceOf returns the waypoint a workload is an instance of: a pod
// labelled with the name of a waypoint of its namespace.
func instanceOf(m *meta, c model.ClusterID, ns string, objLabels map[string]string) *Waypoint {
	if gw := objLabels[labelGatewayName]; gw != "" {
		return m.waypoint(c, ns, gw)
	}
	return nil
}

// workloadWaypoint is the waypoint of a workload: none for an instance of
// a waypoint, else the one it uses when that one takes workload traffic.
func workloadWaypoint(m *meta, c model.ClusterID, ns string, objLabels map[string]string) (*Waypoint, string) {
	if instanceOf(m, c, ns, objLabels) != nil {
		return nil, ""
	}
	w, own, problem := waypointFor(m, c, ns, objLabels)
	if w == nil {
		return nil, problem
	}
	if w.For == ForWorkload || w.For == ForAll {
		return w, ""
	}
	if !own {
		return nil, "" // a namespace's waypoint for services only
	}
	return nil, fmt.Sprintf("waypoint %s/%s does not take workload traffic (istio.io/waypoint-for: %s)", w.Namespace, w.Name, w.For)
}

// serviceWaypoint is the waypoint of a service, when it takes service
// traffic; a waypoint's or east-west gateway's own Service has none.
func serviceWaypoint(m *meta, c model.ClusterID, svc *model.Service) (*Waypoint, string) {
	if managed := svc.Labels[labelGatewayManaged]; managed == managedByMesh || managed == managedByEastWest {
		return nil, ""
	}
	w, _, problem := waypointFor(m, c, svc.Namespace, svc.Labels)
	if w == nil {
		return nil, problem
	}
	if w.For != ForService && w.For != ForAll {
		return nil, fmt.Sprintf("waypoint %s/%s does not take service traffic (istio.io/waypoint-for: %s)", w.Namespace, w.Name, w.For)
	}
	return w, ""
}

// Labels of a canary waypoint.
const (
	labelUseWaypointCanary          = "istio.io/use-waypoint-canary"
	labelUseWaypointCanaryNamespace = "istio.io/use-waypoint-canary-namespace"
)

// weightedWaypoints returns a service's canary waypoints, as Istio reads
// them: when the service uses primary (its own use-waypoint label, else
// its namespace's), the canary named at the same level
// (istio.io/use-waypoint-canary, in the namespace
// istio.io/use-waypoint-canary-namespace names, else the service's)
// takes the weight, in percent, of the istio.io/use-waypoint-canary-weight
// annotation of that level (0 when absent) and primary the rest. A canary
// that is the primary, not there, not admitting the namespace or not
// taking service traffic, or a weight that is not 0 to 100, gives none
// and a reason.
func weightedWaypoints(m *meta, c model.ClusterID, svc *model.Service, primary *Waypoint) ([]*workloadapi.WeightedWaypoint, string) {
	labels, annotations := svc.Labels, svc.Annotations
	if _, own := svc.Labels[labelUseWaypoint]; !own {
		if _, ok := svc.Labels[labelUseWaypointCanary]; !ok {
			if ns := m.namespace(c, svc.Namespace); ns != nil {
				if _, ok := ns.Labels[labelUseWaypointCanary]; ok {
					labels = ns.Labels
				}
			}
		}
		if _, ok := svc.Annotations[model.AnnotationWaypointCanaryWeight]; !ok {
			if ns := m.namespace(c, svc.Namespace); ns != nil {
				annotations = ns.Annotations
			}
		}
	}
	name := labels[labelUseWaypointCanary]
	if name == "" || name == "none" {
		return nil, ""
	}
	wns := svc.Namespace
	if v, ok := labels[labelUseWaypointCanaryNamespace]; ok {
		wns = v
	}
	if wns == primary.Namespace && name == primary.Name {
		return nil, fmt.Sprintf("canary waypoint %s/%s is the waypoint itself; no canary", wns, name)
	}
	var weight uint32
	if v, ok := annotations[model.AnnotationWaypointCanaryWeight]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Sprintf("%s %q is not a weight from 0 to 100; no canary", model.AnnotationWaypointCanaryWeight, v)
		}
		weight = uint32(n)
	}
	canary, problem := resolveWaypoint(m, c, svc.Namespace, wns, name)
	if canary == nil {
		return nil, "canary " + problem
	}
	if canary.For != ForService && canary.For != ForAll {
		return nil, fmt.Sprintf("canary waypoint %s/%s does not take service traffic (istio.io/waypoint-for: %s); no canary", wns, name, canary.For)
	}
	return []*workloadapi.WeightedWaypoint{
		{Destination: primary.Address, Weight: 100 - weight},
		{Destination: canary.Address, Weight: weight},
	}, ""
}
