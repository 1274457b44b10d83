package serviceentry

import (
	"context"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
)

// Kind says whether a Ref names a ServiceEntry or a WorkloadEntry.
type Kind uint8

// Kinds of Source objects.
const (
	KindServiceEntry Kind = iota + 1
	KindWorkloadEntry
	// KindNamespace names a namespace of a NamespaceSource.
	KindNamespace
)

// String returns "ServiceEntry", "WorkloadEntry" or "Namespace".
func (k Kind) String() string {
	switch k {
	case KindServiceEntry:
		return "ServiceEntry"
	case KindWorkloadEntry:
		return "WorkloadEntry"
	case KindNamespace:
		return "Namespace"
	}
	return "Kind(?)"
}

// Ref names an object of a Source. A namespace's Ref has Kind
// KindNamespace, its name as Name, and Namespace "".
type Ref struct {
	Kind            Kind
	Namespace, Name string
}

// String returns "Kind/namespace/name".
func (r Ref) String() string { return r.Kind.String() + "/" + r.Namespace + "/" + r.Name }

// Source is where a Controller reads ServiceEntries and WorkloadEntries
// from: a live cluster (InformerSource) or objects kept in memory
// (StaticSource).
//
// Contract:
//   - The getters return the source's current objects, nil when absent.
//     Returned objects are shared and must not be modified; a source
//     never modifies an object it returned either (a change is a new
//     object).
//   - After any change to an object, every handler added with Subscribe
//     is called with the object's Ref, from any goroutine, possibly
//     concurrently and possibly more than once per change; a handler
//     re-reads the object with the getters. Handlers must be quick and
//     must not call back into Subscribe or unsubscribe.
//   - The channel Synced returns is closed once the getters reflect the
//     source's initial state (the same channel every call); Run runs the
//     source until ctx is done and returns only after every goroutine it
//     started has stopped.
type Source interface {
	ServiceEntries() []*networkingv1.ServiceEntry
	WorkloadEntries() []*networkingv1.WorkloadEntry
	ServiceEntry(namespace, name string) *networkingv1.ServiceEntry
	WorkloadEntry(namespace, name string) *networkingv1.WorkloadEntry
	Subscribe(handler func(Ref)) (unsubscribe func())
	Synced() <-chan struct{}
	Run(ctx context.Context) error
}

// NamespaceSource is a Source that also knows its cluster's namespaces, as
// a Controller with Options.NamespaceSelector needs (StaticSource always;
// InformerSource when given InformerOptions.Namespaces). Besides the
// Source contract, its handlers are called with the Ref of a namespace
// (KindNamespace) after the namespace is added, changed or deleted.
type NamespaceSource interface {
	Source
	// NamespaceLabels returns a namespace's labels, and false when the
	// source does not hold the namespace. The map is shared and must not
	// be modified.
	NamespaceLabels(name string) (labels map[string]string, exists bool)
}

// namespaceAware is implemented by a NamespaceSource that may hold no
// namespaces at all (an InformerSource without a Kubernetes client), so
// that New can refuse it for a NamespaceSelector rather than ignore every
// object.
type namespaceAware interface{ watchesNamespaces() bool }
