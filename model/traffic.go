package model

import (
	"fmt"
	"strings"
)

// Traffic distributions (Service.TrafficDistribution).
const (
	// TrafficPreferSameZone prefers endpoints in the client's zone, then
	// region, then network. Kubernetes' PreferClose means the same.
	TrafficPreferSameZone = "PreferSameZone"
	// TrafficPreferSameNode prefers endpoints on the client's node, then
	// in its subzone, zone, region and network.
	TrafficPreferSameNode = "PreferSameNode"
)

// TrafficDistributionAnnotation is Istio's annotation for a traffic
// distribution, on a Service, a ServiceEntry or their namespace.
const TrafficDistributionAnnotation = "networking.istio.io/traffic-distribution"

// ParseTrafficDistribution returns a service's traffic distribution as
// Istio reads it: the Kubernetes Service's spec.trafficDistribution when
// it is one Istio knows ("PreferClose" and "PreferSameZone" are
// TrafficPreferSameZone; "PreferSameNode" is TrafficPreferSameNode);
// else the object's TrafficDistributionAnnotation (the same values, in
// any case); else its namespace's. An annotation whose value is unknown
// decides: the distribution is "" (anywhere), and the error says which
// value was ignored; so does an unknown spec value, which Istio passes
// over silently for the annotations. spec is "" when unset (always, for
// a ServiceEntry).
func ParseTrafficDistribution(spec, annotation, namespaceAnnotation string) (string, error) {
	var ignored error
	switch spec {
	case "PreferClose", TrafficPreferSameZone:
		return TrafficPreferSameZone, nil
	case TrafficPreferSameNode:
		return TrafficPreferSameNode, nil
	case "":
	default:
		ignored = fmt.Errorf("spec.trafficDistribution %q is not PreferClose, PreferSameZone or PreferSameNode: ignored", spec)
	}
	for _, a := range []struct{ where, v string }{{"annotation", annotation}, {"namespace's annotation", namespaceAnnotation}} {
		if a.v == "" {
			continue
		}
		switch strings.ToLower(a.v) {
		case "preferclose", "prefersamezone":
			return TrafficPreferSameZone, ignored
		case "prefersamenode":
			return TrafficPreferSameNode, ignored
		}
		err := fmt.Errorf("%s %s=%q is not PreferClose, PreferSameZone or PreferSameNode: the service has no traffic distribution", a.where, TrafficDistributionAnnotation, a.v)
		if ignored != nil {
			err = fmt.Errorf("%w; %w", ignored, err)
		}
		return "", err
	}
	return "", ignored
}
