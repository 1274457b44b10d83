package model

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// Istio's metadata of a workload that every registry reads alike.
const (
	// WorkloadNameLabel overrides the workload name Istio derives for a
	// Pod or WorkloadEntry (WorkloadInstance.WorkloadName).
	WorkloadNameLabel = "service.istio.io/workload-name"
	// AmbientRedirectionAnnotation, set to "enabled" by Istio's CNI,
	// marks a workload whose traffic goes through its node's ztunnel
	// (WorkloadInstance.Redirected).
	AmbientRedirectionAnnotation = "ambient.istio.io/redirection"
)

// WorkloadKey identifies a workload instance across registries.
type WorkloadKey struct {
	Cluster   ClusterID
	Kind      WorkloadKind
	Namespace string
	Name      string
}

// String returns "cluster/Kind/namespace/name".
func (k WorkloadKey) String() string {
	return string(k.Cluster) + "/" + k.Kind.String() + "/" + k.Namespace + "/" + k.Name
}

// Compare orders workload keys by cluster, kind (Pods before
// WorkloadEntries), namespace and name: the order in which
// registry.Discovery lists workloads and the dump writes them. It returns
// -1, 0 or +1 as k sorts before, with or after o.
func (k WorkloadKey) Compare(o WorkloadKey) int {
	if c := cmp.Compare(k.Cluster, o.Cluster); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Kind, o.Kind); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Namespace, o.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(k.Name, o.Name)
}

// WorkloadInstance is a Pod or WorkloadEntry, published so that the other
// registry's selectors can select it: Pods reach ServiceEntry
// workloadSelectors, WorkloadEntries reach Kubernetes Service selectors.
type WorkloadInstance struct {
	Kind      WorkloadKind
	Namespace string
	Name      string
	// Endpoint describes the workload's address and metadata; its Port
	// and ServicePortName are zero, its Cluster is the workload's.
	Endpoint Endpoint
	// PortMap maps port names to the numbers the workload listens on: a
	// WorkloadEntry's ports, or a Pod's named container ports.
	PortMap map[string]uint32
	// WorkloadName names the workload the instance is one of, as Istio
	// names it: a Pod's service.istio.io/workload-name label, else its
	// controller (the Deployment of its ReplicaSet, the CronJob of its
	// Job, or the controller itself), else the Pod; a WorkloadEntry's
	// istio.io/autoRegistrationGroup annotation, else its
	// service.istio.io/workload-name label, else the entry. "" when the
	// registry does not say.
	WorkloadName string
	// HostNetwork is true for a Pod on its node's network namespace,
	// whose IP the node's other such Pods share.
	HostNetwork bool
	// Redirected is true when the object carries the annotation
	// ambient.istio.io/redirection: enabled: Istio's CNI redirects the
	// workload's traffic through its node's ztunnel, which then accepts
	// HBONE for it.
	Redirected bool
}

// Key returns the workload's identity.
func (w *WorkloadInstance) Key() WorkloadKey {
	return WorkloadKey{Cluster: w.Endpoint.Cluster, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
}

// Addresses returns the workload's IPs, primary first.
func (w *WorkloadInstance) Addresses() []netip.Addr { return w.Endpoint.Addresses }

// Equals reports whether w and o are equal in every field. Nil equals only
// nil.
func (w *WorkloadInstance) Equals(o *WorkloadInstance) bool {
	if w == o {
		return true // also nil and nil; values are immutable once shared
	}
	if w == nil || o == nil {
		return false
	}
	return w.Kind == o.Kind && w.Namespace == o.Namespace && w.Name == o.Name &&
		w.Endpoint.Equals(&o.Endpoint) && maps.Equal(w.PortMap, o.PortMap) &&
		w.WorkloadName == o.WorkloadName && w.HostNetwork == o.HostNetwork && w.Redirected == o.Redirected
}

// DeepCopy returns a copy of w that shares no memory with it.
func (w *WorkloadInstance) DeepCopy() *WorkloadInstance {
	if w == nil {
		return nil
	}
	out := *w
	out.Endpoint = *w.Endpoint.DeepCopy()
	out.PortMap = maps.Clone(w.PortMap)
	return &out
}

// ServiceInstance is one endpoint of one port of a service.
type ServiceInstance struct {
	Service     *Service
	ServicePort Port
	Endpoint    *Endpoint
}

// Equals reports whether i and o are equal in every field. Nil equals only
// nil.
func (i *ServiceInstance) Equals(o *ServiceInstance) bool {
	if i == o {
		return true // also nil and nil; values are immutable once shared
	}
	if i == nil || o == nil {
		return false
	}
	return i.Service.Equals(o.Service) && i.ServicePort == o.ServicePort && i.Endpoint.Equals(o.Endpoint)
}

// DeepCopy returns a copy of i that shares no memory with it.
func (i *ServiceInstance) DeepCopy() *ServiceInstance {
	if i == nil {
		return nil
	}
	return &ServiceInstance{Service: i.Service.DeepCopy(), ServicePort: i.ServicePort, Endpoint: i.Endpoint.DeepCopy()}
}

// ServiceTarget is a service port a proxy serves: the answer to "which
// services does the workload at these IPs back?".
type ServiceTarget struct {
	Service *Service
	// Port is the service port; TargetPort the port the workload listens
	// on for it.
	Port       Port
	TargetPort uint32
}

// Equals reports whether t and o are equal in every field.
func (t ServiceTarget) Equals(o ServiceTarget) bool {
	return t.Service.Equals(o.Service) && t.Port == o.Port && t.TargetPort == o.TargetPort
}

// DeepCopy returns a copy of t that shares no memory with it.
func (t ServiceTarget) DeepCopy() ServiceTarget {
	t.Service = t.Service.DeepCopy()
	return t
}

// Diagnostic is something a registry refused or could not fully use: an
// invalid ServiceEntry, a port conflict between clusters, an endpoint
// waiting for its pod.
type Diagnostic struct {
	Severity Severity
	// Kind, Namespace and Name identify the object, e.g. "ServiceEntry".
	Kind, Namespace, Name string
	// Cluster is the cluster the object is in; "" when not cluster-bound.
	Cluster ClusterID
	// Message says what is wrong and what was done about it.
	Message string
}

// String returns "Severity Kind namespace/name [cluster]: message".
func (d Diagnostic) String() string {
	s := d.Severity.String() + " " + d.Kind + " " + d.Namespace + "/" + d.Name
	if d.Cluster != "" {
		s += " [" + string(d.Cluster) + "]"
	}
	return s + ": " + d.Message
}

// CompareDiagnostics orders diagnostics by cluster, kind, namespace, name,
// severity and message.
func CompareDiagnostics(a, b Diagnostic) int {
	for _, c := range [...]int{
		strings.Compare(string(a.Cluster), string(b.Cluster)),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Name, b.Name),
		int(a.Severity) - int(b.Severity),
		strings.Compare(a.Message, b.Message),
	} {
		if c != 0 {
			return c
		}
	}
	return 0
}

// SortDiagnostics sorts ds in place by CompareDiagnostics.
func SortDiagnostics(ds []Diagnostic) { slices.SortFunc(ds, CompareDiagnostics) }
