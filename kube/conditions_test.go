package kube

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/model"
)

// TestSliceConditionChanges changes slices' endpoints' conditions, and
// more; after each change the registry equals a fresh controller's over
// the same objects.
func TestSliceConditionChanges(t *testing.T) {
	base := func() []runtime.Object {
		notReady := svcObj("ns", "nr", "10.96.0.3", nil, svcPort("http", 80))
		notReady.Spec.PublishNotReadyAddresses = true
		return []runtime.Object{
			nodeObj("n1", "r", "z1"),
			svcObj("ns", "web", "10.96.0.1", nil, svcPort("http", 80), svcPort("grpc", 90)),
			svcObj("ns", "two", "10.96.0.2", nil, svcPort("http", 80)),
			notReady,
			podObj("ns", "a", "10.0.0.1", "n1", nil),
			podObj("ns", "b", "10.0.0.2", "n1", nil),
			func() *discoveryv1.EndpointSlice {
				s := sliceObj("ns", "web-1", "web", discoveryv1.AddressTypeIPv4, 8080,
					sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.2", ready: true},
					sliceEP{addr: "10.0.0.5", pod: "missing", ready: true}, sliceEP{addr: "10.0.0.2", pod: "b", ready: false})
				s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr("grpc"), Port: ptr(int32(9090))})
				return s
			}(),
			sliceObj("ns", "two-1", "two", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}),
			sliceObj("ns", "two-2", "two", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.2", pod: "b", ready: true}),
			sliceObj("ns", "nr-1", "nr", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", pod: "a", ready: true}),
		}
	}
	// web-1 lists 10.0.0.2 twice; "uniq" is web-1 without the repeat.
	uniq := func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[:3] }
	tests := []struct {
		name   string
		slice  string
		change func(*discoveryv1.EndpointSlice)
	}{
		{"readiness, a slice listing an address twice", "web-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = ptr(false) }},
		{"the losing endpoint of a repeated address draining", "web-1", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[1].Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}
		}},
		{"repeat removed", "web-1", uniq},
		{"readiness, a service's one slice", "nr-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = ptr(false) }},
		{"readiness, a service of two slices", "two-1", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = ptr(false) }},
		{"address", "two-2", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"10.0.0.9"} }},
		{"moved to another service", "nr-1", func(s *discoveryv1.EndpointSlice) { s.Labels[discoveryv1.LabelServiceName] = "web" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := base()
			f := newFakeCluster(objs...)
			c := startController(t, f, Options{})
			slices := f.DiscoveryV1().EndpointSlices("ns")
			s, err := slices.Get(context.Background(), tt.slice, metav1.GetOptions{})
			mustNot(t, err)
			tt.change(s)
			_, err = slices.Update(context.Background(), s, metav1.UpdateOptions{})
			mustNot(t, err)
			settle(t, c, objs, tt.slice, s)
		})
	}

	// On a slice where each endpoint is one workload: readiness, serving
	// and terminating, of a pod's endpoint, an address-only one and a
	// withheld one, there and back.
	patches := []struct {
		name   string
		change func(*discoveryv1.EndpointSlice)
	}{
		{"not ready", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = ptr(false) }},
		{"draining", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[1].Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}
		}},
		{"withheld endpoint", func(s *discoveryv1.EndpointSlice) { s.Endpoints[2].Conditions.Ready = ptr(false) }},
		{"all at once", func(s *discoveryv1.EndpointSlice) {
			for i := range s.Endpoints {
				s.Endpoints[i].Conditions.Ready = ptr(false)
			}
		}},
		{"nothing", func(*discoveryv1.EndpointSlice) {}},
	}
	for _, tt := range patches {
		t.Run("there and back: "+tt.name, func(t *testing.T) {
			objs := base()
			for _, o := range objs {
				if s, ok := o.(*discoveryv1.EndpointSlice); ok && s.Name == "web-1" {
					uniq(s)
				}
			}
			f := newFakeCluster(objs...)
			c := startController(t, f, Options{})
			slices := f.DiscoveryV1().EndpointSlices("ns")
			for range 2 { // there and back
				s, err := slices.Get(context.Background(), "web-1", metav1.GetOptions{})
				mustNot(t, err)
				tt.change(s)
				_, err = slices.Update(context.Background(), s, metav1.UpdateOptions{})
				mustNot(t, err)
				settle(t, c, objs, "web-1", s)
				objs = replaceSlice(objs, s)
				tt.change = func(s *discoveryv1.EndpointSlice) {
					for i := range s.Endpoints {
						s.Endpoints[i].Conditions = discoveryv1.EndpointConditions{Ready: ptr(true)}
					}
				}
			}
		})
	}
}

// replaceSlice returns objs with the slice of s's name replaced by s.
func replaceSlice(objs []runtime.Object, s *discoveryv1.EndpointSlice) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		if old, ok := o.(*discoveryv1.EndpointSlice); ok && old.Name == s.Name {
			o = s.DeepCopy()
		}
		out[i] = o
	}
	return out
}

// settle waits until c's dump equals a fresh controller's over objs with
// the named slice replaced by s.
func settle(t *testing.T, c *Controller, objs []runtime.Object, name string, s *discoveryv1.EndpointSlice) {
	t.Helper()
	want := dump(t, startController(t, newFakeCluster(replaceSlice(objs, s)...), Options{}))
	waitDump(t, c, want, "after changing "+name+", the registry (want: a fresh one's)")
}

// The mapping of Istio's registry (checked with the oracle, see
// hack/oracle): an unset serving or terminating condition counts as set,
// and Draining needs a service that drains its endpoints.
func TestEndpointHealth(t *testing.T) {
	tru, fal := ptr(true), ptr(false)
	tests := []struct {
		name        string
		c           discoveryv1.EndpointConditions
		want, drain model.HealthStatus // plain service, draining service
		serving     bool
	}{
		{"unset is ready", discoveryv1.EndpointConditions{}, model.Healthy, model.Healthy, true},
		{"ready", discoveryv1.EndpointConditions{Ready: tru}, model.Healthy, model.Healthy, true},
		{"not ready, terminating unset", discoveryv1.EndpointConditions{Ready: fal}, model.Terminating, model.Draining, false},
		{"not ready, not terminating", discoveryv1.EndpointConditions{Ready: fal, Terminating: fal}, model.Unhealthy, model.Unhealthy, false},
		{"not ready, serving, terminating unset", discoveryv1.EndpointConditions{Ready: fal, Serving: tru}, model.Terminating, model.Draining, true},
		{"serving and terminating", discoveryv1.EndpointConditions{Ready: fal, Serving: tru, Terminating: tru}, model.Terminating, model.Draining, true},
		{"terminating, serving unset", discoveryv1.EndpointConditions{Ready: fal, Terminating: tru}, model.Terminating, model.Draining, false},
		{"terminating, not serving", discoveryv1.EndpointConditions{Ready: fal, Serving: fal, Terminating: tru}, model.Terminating, model.Terminating, false},
		{"ready and terminating", discoveryv1.EndpointConditions{Ready: tru, Serving: tru, Terminating: tru}, model.Healthy, model.Healthy, true},
	}
	for _, tt := range tests {
		got := endpointHealth(newConditions(tt.c), false)
		if got.health != tt.want || got.serving != tt.serving {
			t.Errorf("%s: endpointHealth = %+v, want %v, serving %v", tt.name, got, tt.want, tt.serving)
		}
		if got := endpointHealth(newConditions(tt.c), true); got.health != tt.drain || got.serving != tt.serving {
			t.Errorf("%s, draining service: endpointHealth = %+v, want %v, serving %v", tt.name, got, tt.drain, tt.serving)
		}
	}
}
