package model

import "maps"

// Namespace is a Kubernetes Namespace as the registry holds it: its name,
// labels and the annotations consumers read (ambient mode's waypoint
// labels and canary weight, a mesh's service scopes). A kube registry
// publishes every namespace of its cluster.
type Namespace struct {
	Cluster ClusterID
	Name    string
	Labels  map[string]string
	// Annotations are the consumer annotations the namespace has
	// (KeepAnnotations); nil when none.
	Annotations map[string]string
}

// AnnotationWaypointCanaryWeight is the weight in percent (0 to 100) of
// the canary waypoint a service, ServiceEntry or namespace names with
// the istio.io/use-waypoint-canary label.
const AnnotationWaypointCanaryWeight = "istio.io/use-waypoint-canary-weight"

// KeepAnnotations returns the consumer annotations among annotations:
// those of Services, ServiceEntries and Namespaces that registries keep,
// as written, for their consumers (Service.Annotations,
// Namespace.Annotations): AnnotationWaypointCanaryWeight. Nil when none.
func KeepAnnotations(annotations map[string]string) map[string]string {
	v, ok := annotations[AnnotationWaypointCanaryWeight]
	if !ok {
		return nil
	}
	return map[string]string{AnnotationWaypointCanaryWeight: v}
}

// NamespaceKey identifies a namespace: its cluster and name.
type NamespaceKey struct {
	Cluster ClusterID
	Name    string
}

// Key returns the namespace's key.
func (n *Namespace) Key() NamespaceKey { return NamespaceKey{Cluster: n.Cluster, Name: n.Name} }

// Equals reports whether two namespaces hold the same data; nil equals
// only nil.
func (n *Namespace) Equals(o *Namespace) bool {
	if n == o {
		return true
	}
	if n == nil || o == nil {
		return false
	}
	return n.Cluster == o.Cluster && n.Name == o.Name && maps.Equal(n.Labels, o.Labels) &&
		maps.Equal(n.Annotations, o.Annotations)
}

// Cluster is what the registry holds of a cluster itself: its network,
// the network of its Services' VIPs and of its workloads that name none
// of their own. A kube registry publishes its cluster's.
//
// It is a comparable value: == compares every field.
type Cluster struct {
	ID      ClusterID
	Network NetworkID
}
