package serviceentry

import (
	"maps"
	"testing"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
)

// The informers' transform keeps every annotation the registry and its
// consumers read, of each kind, and drops the rest.
func TestStripKeepsTheAnnotationsRead(t *testing.T) {
	all := map[string]string{
		model.TrafficDistributionAnnotation:                "PreferSameZone",
		model.AnnotationWaypointCanaryWeight:               "20",
		annotationHealthChecks:                             "true",
		model.AmbientRedirectionAnnotation:                 "enabled",
		annotationAutoRegistrationGroup:                    "group",
		"kubectl.kubernetes.io/last-applied-configuration": "{...}",
		"example.com/other":                                "x",
	}
	want := maps.Clone(all)
	delete(want, "kubectl.kubernetes.io/last-applied-configuration")
	delete(want, "example.com/other")
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "o", Annotations: all}
	for _, obj := range []any{
		&networkingv1.ServiceEntry{ObjectMeta: meta},
		&networkingv1.WorkloadEntry{ObjectMeta: meta},
		&corev1.Namespace{ObjectMeta: meta},
	} {
		out, err := strip(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(metav1.Object).GetAnnotations()
		if !maps.Equal(got, want) {
			t.Errorf("%T: annotations %v, want %v", obj, got, want)
		}
	}
	if len(all) != 7 {
		t.Errorf("strip modified its input: %v", all)
	}
}
