package serviceentry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	networkingv1alpha3 "istio.io/client-go/pkg/apis/networking/v1alpha3"
	networkingv1beta1 "istio.io/client-go/pkg/apis/networking/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/subs"
	"github.com/meshreg/meshreg/model"
)

// ErrUnsupportedObject is wrapped by StaticSource.Upsert's error for an
// object that is neither a ServiceEntry, a WorkloadEntry nor a Namespace.
var ErrUnsupportedObject = errors.New("not a ServiceEntry, WorkloadEntry or Namespace")

// StaticSource is a Source whose objects are added, replaced and deleted
// from code: for manifests loaded from files (see internal/manifest),
// tests, and control planes that get their configuration elsewhere. It
// is synced from the start. It holds Namespaces too, for a Controller's
// NamespaceSelector. The zero value is an empty source, ready to use; it
// is safe for concurrent use.
type StaticSource struct {
	// mu guards ses, wes, namespaces and nsTraffic.
	mu  sync.RWMutex
	ses map[nsName]*networkingv1.ServiceEntry
	wes map[nsName]*networkingv1.WorkloadEntry
	// namespaces holds each namespace's labels, nsTraffic its
	// model.TrafficDistributionAnnotation.
	namespaces map[string]map[string]string
	nsTraffic  map[string]string
	handlers   subs.Set[func(Ref)]

	syncedOnce sync.Once
	synced     chan struct{} // closed; made by Synced
}

var _ NamespaceSource = (*StaticSource)(nil)

type nsName struct{ Namespace, Name string }

// NewStaticSource returns a source holding objs; see Upsert.
func NewStaticSource(objs ...runtime.Object) (*StaticSource, error) {
	s := &StaticSource{}
	return s, s.Upsert(objs...)
}

// Upsert adds each ServiceEntry and WorkloadEntry (networking v1, v1beta1
// or v1alpha3) and each Namespace (of which it keeps the labels and the
// traffic distribution annotation) of objs,
// replacing one with the same namespace and name. The source keeps
// copies: the caller may reuse objs. Other objects are skipped, and
// reported in the error (wrapping ErrUnsupportedObject); the supported
// ones are added all the same.
func (s *StaticSource) Upsert(objs ...runtime.Object) error {
	var errs []error
	var changed []Ref
	s.mu.Lock()
	for _, o := range objs {
		if se := toServiceEntry(o); se != nil {
			if s.ses == nil {
				s.ses = map[nsName]*networkingv1.ServiceEntry{}
			}
			s.ses[nsName{se.Namespace, se.Name}] = se
			changed = append(changed, Ref{KindServiceEntry, se.Namespace, se.Name})
		} else if we := toWorkloadEntry(o); we != nil {
			if s.wes == nil {
				s.wes = map[nsName]*networkingv1.WorkloadEntry{}
			}
			s.wes[nsName{we.Namespace, we.Name}] = we
			changed = append(changed, Ref{KindWorkloadEntry, we.Namespace, we.Name})
		} else if ns, ok := o.(*corev1.Namespace); ok {
			if s.namespaces == nil {
				s.namespaces = map[string]map[string]string{}
				s.nsTraffic = map[string]string{}
			}
			s.namespaces[ns.Name] = maps.Clone(ns.Labels)
			s.nsTraffic[ns.Name] = ns.Annotations[model.TrafficDistributionAnnotation]
			changed = append(changed, Ref{Kind: KindNamespace, Name: ns.Name})
		} else {
			errs = append(errs, fmt.Errorf("%T: %w", o, ErrUnsupportedObject))
		}
	}
	handlers := s.handlers.All()
	s.mu.Unlock()
	notify(handlers, changed)
	return errors.Join(errs...)
}

// DeleteServiceEntry removes a ServiceEntry; deleting an absent one does
// nothing.
func (s *StaticSource) DeleteServiceEntry(namespace, name string) {
	s.delete(Ref{KindServiceEntry, namespace, name})
}

// DeleteWorkloadEntry removes a WorkloadEntry; deleting an absent one does
// nothing.
func (s *StaticSource) DeleteWorkloadEntry(namespace, name string) {
	s.delete(Ref{KindWorkloadEntry, namespace, name})
}

// DeleteNamespace removes a Namespace; deleting an absent one does
// nothing.
func (s *StaticSource) DeleteNamespace(name string) {
	s.delete(Ref{Kind: KindNamespace, Name: name})
}

func (s *StaticSource) delete(r Ref) {
	k := nsName{r.Namespace, r.Name}
	s.mu.Lock()
	var found bool
	switch r.Kind {
	case KindServiceEntry:
		_, found = s.ses[k]
		delete(s.ses, k)
	case KindWorkloadEntry:
		_, found = s.wes[k]
		delete(s.wes, k)
	case KindNamespace:
		_, found = s.namespaces[r.Name]
		delete(s.namespaces, r.Name)
		delete(s.nsTraffic, r.Name)
	}
	handlers := s.handlers.All()
	s.mu.Unlock()
	if found {
		notify(handlers, []Ref{r})
	}
}

// ServiceEntries returns every ServiceEntry, sorted by namespace and name.
func (s *StaticSource) ServiceEntries() []*networkingv1.ServiceEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedValues(s.ses)
}

// WorkloadEntries returns every WorkloadEntry, sorted by namespace and
// name.
func (s *StaticSource) WorkloadEntries() []*networkingv1.WorkloadEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedValues(s.wes)
}

// ServiceEntry returns the ServiceEntry, or nil.
func (s *StaticSource) ServiceEntry(namespace, name string) *networkingv1.ServiceEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ses[nsName{namespace, name}]
}

// WorkloadEntry returns the WorkloadEntry, or nil.
func (s *StaticSource) WorkloadEntry(namespace, name string) *networkingv1.WorkloadEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.wes[nsName{namespace, name}]
}

// NamespaceTrafficDistribution returns a Namespace's
// model.TrafficDistributionAnnotation, "" for none.
func (s *StaticSource) NamespaceTrafficDistribution(name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nsTraffic[name]
}

// NamespaceLabels returns the labels of a Namespace, and false when the
// source holds none of that name.
func (s *StaticSource) NamespaceLabels(name string) (map[string]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l, ok := s.namespaces[name]
	return l, ok
}

// Subscribe adds a handler, called synchronously after each change by the
// goroutine that made it.
func (s *StaticSource) Subscribe(handler func(Ref)) (unsubscribe func()) {
	return s.handlers.Add(handler)
}

// HasSynced is always true.
func (s *StaticSource) HasSynced() bool { return true }

// Synced returns a closed channel: the source is synced from the start.
func (s *StaticSource) Synced() <-chan struct{} {
	s.syncedOnce.Do(func() {
		s.synced = make(chan struct{})
		close(s.synced)
	})
	return s.synced
}

// Run blocks until ctx is done; a static source has nothing to run, and
// may be run by several controllers at once.
func (s *StaticSource) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

func notify(handlers []func(Ref), refs []Ref) {
	for _, r := range refs {
		for _, h := range handlers {
			h(r)
		}
	}
}

func sortedValues[T any](m map[nsName]T) []T {
	keys := make([]nsName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b nsName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// toServiceEntry returns a networking v1 copy of a ServiceEntry of any
// served version, or nil when o is not one. The spec and status types are
// shared by all versions; the status carries the addresses Istio's IP
// allocator wrote.
func toServiceEntry(o runtime.Object) *networkingv1.ServiceEntry {
	out := &networkingv1.ServiceEntry{}
	switch se := o.(type) {
	case *networkingv1.ServiceEntry:
		return se.DeepCopy()
	case *networkingv1beta1.ServiceEntry:
		se.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		se.Spec.DeepCopyInto(&out.Spec)
		se.Status.DeepCopyInto(&out.Status)
	case *networkingv1alpha3.ServiceEntry:
		se.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		se.Spec.DeepCopyInto(&out.Spec)
		se.Status.DeepCopyInto(&out.Status)
	default:
		return nil
	}
	return out
}

// toWorkloadEntry is toServiceEntry for WorkloadEntries; the status is
// kept, it carries the health condition.
func toWorkloadEntry(o runtime.Object) *networkingv1.WorkloadEntry {
	out := &networkingv1.WorkloadEntry{}
	switch we := o.(type) {
	case *networkingv1.WorkloadEntry:
		return we.DeepCopy()
	case *networkingv1beta1.WorkloadEntry:
		we.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		we.Spec.DeepCopyInto(&out.Spec)
		we.Status.DeepCopyInto(&out.Status)
	case *networkingv1alpha3.WorkloadEntry:
		we.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		we.Spec.DeepCopyInto(&out.Spec)
		we.Status.DeepCopyInto(&out.Status)
	default:
		return nil
	}
	return out
}
