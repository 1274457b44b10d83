package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// step is one change applied to a running cluster.
type step func(t *testing.T, f *fakeCluster)

func create(obj runtime.Object) step {
	return func(t *testing.T, f *fakeCluster) {
		t.Helper()
		var err error
		switch o := obj.(type) {
		case *corev1.Service:
			_, err = f.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Pod:
			_, err = f.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *discoveryv1.EndpointSlice:
			_, err = f.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Node:
			_, err = f.CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Namespace:
			_, err = f.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("create: unsupported %T", obj)
		}
		mustNot(t, err)
	}
}

func updateObj(obj runtime.Object) step {
	return func(t *testing.T, f *fakeCluster) {
		t.Helper()
		var err error
		switch o := obj.(type) {
		case *corev1.Pod:
			_, err = f.CoreV1().Pods(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
		case *discoveryv1.EndpointSlice:
			_, err = f.DiscoveryV1().EndpointSlices(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
		default:
			t.Fatalf("update: unsupported %T", obj)
		}
		mustNot(t, err)
	}
}

func deleteObj(kind, ns, name string) step {
	return func(t *testing.T, f *fakeCluster) {
		t.Helper()
		var err error
		switch kind {
		case "Service":
			err = f.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "Pod":
			err = f.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "EndpointSlice":
			err = f.DiscoveryV1().EndpointSlices(ns).Delete(ctx, name, metav1.DeleteOptions{})
		default:
			t.Fatalf("delete: unsupported %s", kind)
		}
		mustNot(t, err)
	}
}

func aged(s *discoveryv1.EndpointSlice, sec int64) *discoveryv1.EndpointSlice {
	s.CreationTimestamp = metav1.NewTime(time.Unix(1_700_000_000+sec, 0))
	return s
}

// TestOrderingConverges applies changes to a running controller and
// expects the dump of a fresh controller over the final objects: the
// state is a function of the objects, not of the order of events.
func TestOrderingConverges(t *testing.T) {
	svcA := func() *corev1.Service {
		return svcObj("default", "a", "10.96.0.1", map[string]string{"app": "a"}, svcPort("http", 80))
	}
	podA := func(name, ip string, labels map[string]string) *corev1.Pod {
		return podObj("default", name, ip, "node-1", labels)
	}
	tests := []struct {
		name    string
		initial []runtime.Object
		steps   []step
		final   []runtime.Object
	}{{
		name:    "endpoints before pods",
		initial: []runtime.Object{svcA(), nodeObj("node-1", "r", "z")},
		steps: []step{
			create(sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}, sliceEP{"10.1.0.2", "a-2", false})),
			create(podA("a-1", "10.1.0.1", map[string]string{"app": "a"})),
			create(podA("a-2", "10.1.0.2", map[string]string{"app": "a"})),
		},
		final: []runtime.Object{svcA(), nodeObj("node-1", "r", "z"),
			sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}, sliceEP{"10.1.0.2", "a-2", false}),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"}), podA("a-2", "10.1.0.2", map[string]string{"app": "a"})},
	}, {
		name: "pod deleted and IP reused",
		initial: []runtime.Object{svcA(),
			sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "old", true}),
			podA("old", "10.1.0.1", map[string]string{"app": "a", "gen": "1"})},
		steps: []step{
			deleteObj("Pod", "default", "old"),
			create(podA("new", "10.1.0.1", map[string]string{"app": "a", "gen": "2"})),
			updateObj(sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "new", true})),
		},
		final: []runtime.Object{svcA(),
			sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "new", true}),
			podA("new", "10.1.0.1", map[string]string{"app": "a", "gen": "2"})},
	}, {
		name: "endpoint moved between slices",
		initial: []runtime.Object{svcA(),
			aged(sliceObj("default", "a-old", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", false}, sliceEP{"10.1.0.2", "a-2", true}), 0),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"}), podA("a-2", "10.1.0.2", map[string]string{"app": "a"})},
		steps: []step{
			create(aged(sliceObj("default", "a-new", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}), 10)),
			updateObj(aged(sliceObj("default", "a-old", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.2", "a-2", true}), 0)),
		},
		final: []runtime.Object{svcA(),
			aged(sliceObj("default", "a-old", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.2", "a-2", true}), 0),
			aged(sliceObj("default", "a-new", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}), 10),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"}), podA("a-2", "10.1.0.2", map[string]string{"app": "a"})},
	}, {
		name: "endpoint mid-move (in both slices)",
		initial: []runtime.Object{svcA(),
			aged(sliceObj("default", "a-old", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", false}), 0),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"})},
		steps: []step{
			create(aged(sliceObj("default", "a-new", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}), 10)),
		},
		final: []runtime.Object{svcA(),
			aged(sliceObj("default", "a-new", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}), 10),
			aged(sliceObj("default", "a-old", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", false}), 0),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"})},
	}, {
		name: "service deleted and re-created",
		initial: []runtime.Object{svcA(),
			sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"})},
		steps: []step{
			deleteObj("Service", "default", "a"),
			create(svcObj("default", "a", "10.96.0.7", map[string]string{"app": "a"}, svcPort("http", 80), svcPort("http-alt", 81))),
		},
		final: []runtime.Object{svcObj("default", "a", "10.96.0.7", map[string]string{"app": "a"}, svcPort("http", 80), svcPort("http-alt", 81)),
			sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"})},
	}, {
		name:    "slice before service",
		initial: []runtime.Object{podA("a-1", "10.1.0.1", map[string]string{"app": "a"})},
		steps: []step{
			create(sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", false})),
			create(func() *corev1.Service { s := svcA(); s.Spec.PublishNotReadyAddresses = true; return s }()),
		},
		final: []runtime.Object{func() *corev1.Service { s := svcA(); s.Spec.PublishNotReadyAddresses = true; return s }(),
			sliceObj("default", "a-1", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", false}),
			podA("a-1", "10.1.0.1", map[string]string{"app": "a"})},
	}, {
		name: "slice moved to another service by relabelling",
		initial: []runtime.Object{svcA(), svcObj("default", "b", "10.96.0.2", nil, svcPort("http", 80)),
			sliceObj("default", "s", "a", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
			podA("a-1", "10.1.0.1", nil)},
		steps: []step{
			updateObj(sliceObj("default", "s", "b", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true})),
		},
		final: []runtime.Object{svcA(), svcObj("default", "b", "10.96.0.2", nil, svcPort("http", 80)),
			sliceObj("default", "s", "b", discoveryv1.AddressTypeIPv4, 8080, sliceEP{"10.1.0.1", "a-1", true}),
			podA("a-1", "10.1.0.1", nil)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := dump(t, startController(t, newFakeCluster(tt.final...), Options{}))
			f := newFakeCluster(tt.initial...)
			c := startController(t, f, Options{})
			for _, s := range tt.steps {
				s(t, f)
			}
			var got string
			deadline := time.Now().Add(10 * time.Second)
			for got = dump(t, c); got != want && time.Now().Before(deadline); got = dump(t, c) {
				time.Sleep(5 * time.Millisecond)
			}
			if got != want {
				t.Errorf("did not converge:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}
