package model

import (
	"maps"
	"slices"
)

// Gateway is a Kubernetes Gateway API Gateway as the registry holds it:
// the fields consumers read to make waypoints and network gateways of
// it (package address), with its GatewayClass's labels and annotations.
// A kube registry with a Gateway API client publishes every Gateway of
// its cluster.
type Gateway struct {
	Cluster         ClusterID
	Namespace, Name string
	// Class is spec.gatewayClassName.
	Class string
	// Labels are the Gateway's labels; Annotations its annotations but
	// kubectl's last-applied-configuration.
	Labels, Annotations map[string]string
	// ClassLabels and ClassAnnotations are those of its GatewayClass,
	// nil while the class is unknown (or the registry reads no classes).
	ClassLabels, ClassAnnotations map[string]string
	Listeners                     []GatewayListener
	// Addresses are spec.addresses; StatusAddresses status.addresses, in
	// their order.
	Addresses, StatusAddresses []GatewayAddress
}

// GatewayListener is one listener of a Gateway.
type GatewayListener struct {
	Name     string
	Port     uint32
	Protocol string
	// TLS is the listener's tls; nil without.
	TLS *GatewayTLS
	// AllowedRoutes says which namespaces may attach: From is
	// allowedRoutes.namespaces.from ("All", "Same", "Selector"; "" when
	// unset), Selector its selector when one is set and valid.
	AllowedRoutes AllowedRoutes
}

// GatewayTLS is a listener's tls: Mode is tls.mode as written
// ("Terminate", "Passthrough"; "" when unset), Options tls.options.
type GatewayTLS struct {
	Mode    string
	Options map[string]string
}

// AllowedRoutes are a listener's allowedRoutes.namespaces.
type AllowedRoutes struct {
	// From is "All", "Same" or "Selector"; "" when unset.
	From string
	// Selector is the selector of From "Selector"; nil when unset or
	// invalid (then it selects no namespace).
	Selector *LabelSelector
}

// Values of AllowedRoutes.From.
const (
	FromAll      = "All"
	FromSame     = "Same"
	FromSelector = "Selector"
)

// GatewayAddress is one address of a Gateway: Type is "IPAddress",
// "Hostname" or another type the Gateway API allows, "" when the object
// names none; Value as written.
type GatewayAddress struct {
	Type, Value string
}

// Gateway API address types.
const (
	IPAddressType = "IPAddress"
	HostnameType  = "Hostname"
)

// GatewayKey identifies a Gateway: its cluster, namespace and name.
type GatewayKey struct {
	Cluster         ClusterID
	Namespace, Name string
}

// Key returns the Gateway's key.
func (g *Gateway) Key() GatewayKey {
	return GatewayKey{Cluster: g.Cluster, Namespace: g.Namespace, Name: g.Name}
}

// GatewayClassRemote is the class of a Gateway that stands for a
// gateway the config cluster reaches in another (Istio's istio-remote).
const GatewayClassRemote = "istio-remote"

// ServiceAccount returns the service account, "namespace/name", the
// network gateways a Gateway declares run as, as Istio names it: the
// gateway.istio.io/service-account annotation, else the Gateway's name
// (with "-istio-remote" for class istio-remote), in its namespace. The
// sidecar's network gateways (the kube registry's) and ambient mode's
// (the address index's) both take it from here.
func (g *Gateway) ServiceAccount() string {
	sa := g.Annotations["gateway.istio.io/service-account"]
	if sa == "" {
		sa = g.Name
		if g.Class == GatewayClassRemote {
			sa += "-" + GatewayClassRemote
		}
	}
	return g.Namespace + "/" + sa
}

// Equals reports whether two Gateways hold the same data; nil equals
// only nil.
func (g *Gateway) Equals(o *Gateway) bool {
	if g == o {
		return true
	}
	if g == nil || o == nil {
		return false
	}
	return g.Key() == o.Key() && g.Class == o.Class &&
		maps.Equal(g.Labels, o.Labels) && maps.Equal(g.Annotations, o.Annotations) &&
		maps.Equal(g.ClassLabels, o.ClassLabels) && maps.Equal(g.ClassAnnotations, o.ClassAnnotations) &&
		(g.ClassLabels == nil) == (o.ClassLabels == nil) &&
		slices.EqualFunc(g.Listeners, o.Listeners, GatewayListener.equals) &&
		slices.Equal(g.Addresses, o.Addresses) && slices.Equal(g.StatusAddresses, o.StatusAddresses)
}

func (l GatewayListener) equals(o GatewayListener) bool {
	return l.Name == o.Name && l.Port == o.Port && l.Protocol == o.Protocol &&
		(l.TLS == nil) == (o.TLS == nil) && (l.TLS == nil || l.TLS.Mode == o.TLS.Mode && maps.Equal(l.TLS.Options, o.TLS.Options)) &&
		l.AllowedRoutes.From == o.AllowedRoutes.From &&
		l.AllowedRoutes.Selector.Equals(o.AllowedRoutes.Selector)
}

// LabelSelector is a Kubernetes label selector (metav1.LabelSelector) as
// plain data: every label of MatchLabels and every requirement must hold.
// The empty selector selects everything; a nil one nothing.
type LabelSelector struct {
	MatchLabels      map[string]string
	MatchExpressions []LabelRequirement
}

// LabelRequirement is one requirement of a selector: Operator is "In",
// "NotIn", "Exists" or "DoesNotExist"; Values those of In and NotIn.
type LabelRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// Label selector operators.
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
)

// Matches reports whether the selector selects the labels. A nil
// selector selects nothing, and a requirement of an unknown operator is
// never met.
func (s *LabelSelector) Matches(labels map[string]string) bool {
	if s == nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		v, ok := labels[r.Key]
		var met bool
		switch r.Operator {
		case OpIn:
			met = ok && slices.Contains(r.Values, v)
		case OpNotIn:
			met = !ok || !slices.Contains(r.Values, v)
		case OpExists:
			met = ok
		case OpDoesNotExist:
			met = !ok
		}
		if !met {
			return false
		}
	}
	return true
}

// Equals reports whether two selectors are written the same; nil equals
// only nil.
func (s *LabelSelector) Equals(o *LabelSelector) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	return maps.Equal(s.MatchLabels, o.MatchLabels) && slices.EqualFunc(s.MatchExpressions, o.MatchExpressions,
		func(a, b LabelRequirement) bool {
			return a.Key == b.Key && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
		})
}
