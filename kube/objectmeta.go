package kube

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// objectMeta is the metadata of an object the controller caches in its own
// lean form (see podInfo): namespace, name, resource version and labels.
//
// It implements metav1.Object so that client-go's informer machinery
// (key functions, the namespace index, tombstones) handles the lean
// objects as it handles API objects. Fields it does not keep read as zero
// and their setters do nothing: the objects are read-only once cached.
type objectMeta struct {
	namespace       string
	name            string
	resourceVersion string
	labels          map[string]string
	// written is the object's last write on the API server, as its
	// managed fields say (writtenAt); 0 when they say nothing.
	written int64
}

var _ metav1.Object = (*objectMeta)(nil)

// writtenTime returns written as a time; zero when unknown.
func (m *objectMeta) writtenTime() time.Time {
	if m.written == 0 {
		return time.Time{}
	}
	return time.Unix(0, m.written)
}

// lastWrite returns the time of an object's last write (writtenAt); zero
// when unknown.
func lastWrite(m *metav1.ObjectMeta) time.Time {
	if w := writtenAt(m); w != 0 {
		return time.Unix(0, w)
	}
	return time.Time{}
}

func (m *objectMeta) GetNamespace() string                        { return m.namespace }
func (m *objectMeta) SetNamespace(namespace string)               { m.namespace = namespace }
func (m *objectMeta) GetName() string                             { return m.name }
func (m *objectMeta) SetName(name string)                         { m.name = name }
func (m *objectMeta) GetResourceVersion() string                  { return m.resourceVersion }
func (m *objectMeta) SetResourceVersion(version string)           { m.resourceVersion = version }
func (m *objectMeta) GetLabels() map[string]string                { return m.labels }
func (m *objectMeta) SetLabels(labels map[string]string)          { m.labels = labels }
func (m *objectMeta) GetGenerateName() string                     { return "" }
func (m *objectMeta) SetGenerateName(string)                      {}
func (m *objectMeta) GetUID() types.UID                           { return "" }
func (m *objectMeta) SetUID(types.UID)                            {}
func (m *objectMeta) GetGeneration() int64                        { return 0 }
func (m *objectMeta) SetGeneration(int64)                         {}
func (m *objectMeta) GetSelfLink() string                         { return "" }
func (m *objectMeta) SetSelfLink(string)                          {}
func (m *objectMeta) GetCreationTimestamp() metav1.Time           { return metav1.Time{} }
func (m *objectMeta) SetCreationTimestamp(metav1.Time)            {}
func (m *objectMeta) GetDeletionTimestamp() *metav1.Time          { return nil }
func (m *objectMeta) SetDeletionTimestamp(*metav1.Time)           {}
func (m *objectMeta) GetDeletionGracePeriodSeconds() *int64       { return nil }
func (m *objectMeta) SetDeletionGracePeriodSeconds(*int64)        {}
func (m *objectMeta) GetAnnotations() map[string]string           { return nil }
func (m *objectMeta) SetAnnotations(map[string]string)            {}
func (m *objectMeta) GetFinalizers() []string                     { return nil }
func (m *objectMeta) SetFinalizers([]string)                      {}
func (m *objectMeta) GetOwnerReferences() []metav1.OwnerReference { return nil }
func (m *objectMeta) SetOwnerReferences([]metav1.OwnerReference)  {}
func (m *objectMeta) GetManagedFields() []metav1.ManagedFieldsEntry {
	return nil
}
func (m *objectMeta) SetManagedFields([]metav1.ManagedFieldsEntry) {}
