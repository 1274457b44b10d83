package kube

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// TestPodChanges changes pods in ways that keep which endpoints they back
// (labels, service account, phase) and in ways that do not (IP, node).
// After each change the registry equals a fresh controller's over the
// same objects, and the endpoints of pods that did not change keep their
// identity (the memo kept them).
func TestPodChanges(t *testing.T) {
	base := func() []runtime.Object {
		return []runtime.Object{
			nodeObj("n1", "r", "z1"), nodeObj("n2", "r", "z2"),
			svcObj("ns", "web", "10.96.0.1", map[string]string{"app": "web"}, svcPort("http", 80)),
			svcObj("ns", "other", "10.96.0.2", map[string]string{"app": "web"}, svcPort("http", 80)),
			podObj("ns", "a", "10.0.0.1", "n1", map[string]string{"app": "web"}),
			podObj("ns", "b", "10.0.0.2", "n1", map[string]string{"app": "web"}),
			podObj("ns", "c", "10.0.0.3", "n2", map[string]string{"app": "web"}),
			podObj("ns", "d", "10.0.0.4", "n2", map[string]string{"app": "web"}),
			svcObj("ns", "off", "10.96.0.3", map[string]string{"app": "web"}, svcPort("http", 80)),
			// a by targetRef, b by address alone, c by targetRef in both
			// services.
			sliceObj("ns", "web-1", "web", discoveryv1.AddressTypeIPv4, 8080,
				sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.2", ready: true}, sliceEP{addr: "10.0.0.3", pod: "c", ready: false}),
			sliceObj("ns", "other-1", "other", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.3", pod: "c", ready: true}),
			// d by targetRef at an address that is not its IP: its
			// endpoints are not found by its IP.
			sliceObj("ns", "off-1", "off", discoveryv1.AddressTypeIPv4, 8080,
				sliceEP{addr: "10.0.0.1", pod: "a", ready: true}, sliceEP{addr: "10.0.0.40", pod: "d", ready: true}),
		}
	}
	tests := []struct {
		name   string
		pod    string
		change func(*corev1.Pod)
	}{
		{"label of a pod by targetRef", "a", func(p *corev1.Pod) { p.Labels["version"] = "v2" }},
		{"label of a pod by address", "b", func(p *corev1.Pod) { p.Labels["version"] = "v2" }},
		{"label of a pod in two services", "c", func(p *corev1.Pod) { p.Labels["version"] = "v2" }},
		{"label of a pod in a service with an endpoint off its pod's address", "a", func(p *corev1.Pod) { p.Labels["version"] = "v2" }},
		{"label of a pod listed off its address", "d", func(p *corev1.Pod) { p.Labels["version"] = "v2" }},
		{"network label", "a", func(p *corev1.Pod) { p.Labels[labelNetwork] = "net2" }},
		{"service account", "c", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "other" }},
		{"phase to terminal", "a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }},
		{"phase to terminal, a pod by address", "b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }},
		{"nothing", "b", func(*corev1.Pod) {}},
		{"IP", "a", func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "10.0.0.9", []corev1.PodIP{{IP: "10.0.0.9"}} }},
		{"node", "c", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }},
		{"IP taken by the address-only endpoint's pod", "b", func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "10.0.0.7", []corev1.PodIP{{IP: "10.0.0.7"}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeCluster(base()...)
			c := startController(t, f, Options{})
			before := map[string]*model.Endpoint{}
			for _, svc := range []string{"web", "other", "off"} {
				for _, ep := range c.Endpoints(skey("ns", svc), registry.EndpointQuery{}) {
					before[svc+"/"+ep.WorkloadName+"/"+ep.Address()] = ep
				}
			}

			pod, err := f.CoreV1().Pods("ns").Get(context.Background(), tt.pod, metav1.GetOptions{})
			mustNot(t, err)
			pod.Labels = maps.Clone(pod.Labels)
			tt.change(pod)
			_, err = f.CoreV1().Pods("ns").Update(context.Background(), pod, metav1.UpdateOptions{})
			mustNot(t, err)

			changed := base()
			for i, o := range changed {
				if p, ok := o.(*corev1.Pod); ok && p.Name == tt.pod {
					changed[i] = pod.DeepCopy()
				}
			}
			want := dump(t, startController(t, newFakeCluster(changed...), Options{}))
			waitDump(t, c, want, "the changed registry (want: a fresh one's over the changed objects)")
			for _, svc := range []string{"web", "other", "off"} {
				for _, ep := range c.Endpoints(skey("ns", svc), registry.EndpointQuery{}) {
					if ep.WorkloadName == tt.pod {
						continue
					}
					if old := before[svc+"/"+ep.WorkloadName+"/"+ep.Address()]; old != nil && old != ep && old.Equals(ep) {
						t.Errorf("%s: the unchanged endpoint of %s was replaced", svc, ep.WorkloadName)
					}
				}
			}
		})
	}
}

// TestNamespaceSelectedLater: a service's address-only endpoint takes its
// metadata from a Ready pod of its namespace holding the address. When
// the namespace enters the selection after the objects arrived, the
// service appears with the pod's metadata.
func TestNamespaceSelectedLater(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}
	objs := func(podNSSelected bool) []runtime.Object {
		labels := map[string]string{}
		if podNSSelected {
			labels["mesh"] = "on"
		}
		return []runtime.Object{
			nsObj("app", labels),
			nodeObj("n1", "r", "z1"),
			svcObj("app", "web", "10.96.0.1", nil, svcPort("http", 80)),
			sliceObj("app", "web-1", "web", discoveryv1.AddressTypeIPv4, 8080, sliceEP{addr: "10.0.0.1", ready: true}),
			podObj("app", "p", "10.0.0.1", "n1", map[string]string{"app": "p"}),
		}
	}
	f := newFakeCluster(objs(false)...)
	c := startController(t, f, Options{NamespaceSelector: sel})
	want := dump(t, startController(t, newFakeCluster(objs(true)...), Options{NamespaceSelector: sel}))
	if dump(t, c) == want {
		t.Fatal("the namespace being selected or not makes no difference: the test shows nothing")
	}
	_, err := f.CoreV1().Namespaces().Update(context.Background(), nsObj("app", map[string]string{"mesh": "on"}), metav1.UpdateOptions{})
	mustNot(t, err)
	waitDump(t, c, want, "after the namespace was selected, the registry (want: a fresh one's)")
}

// TestRandomPodChangesMatchFresh is a property of the endpoint memos:
// after random histories of pods' metadata and slices' conditions
// changing, the registry equals a fresh controller's over the final
// objects. The worlds mix endpoints at their pod's IP, at another address
// with the pod's targetRef and without a targetRef, in services of one
// and of two ports and of one and two slices. Each failure names its seed.
func TestRandomPodChangesMatchFresh(t *testing.T) {
	const seeds = 24
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 7))
			world := map[string]runtime.Object{}
			put := func(key string, o runtime.Object) { world[key] = o }
			put("n1", nodeObj("n1", "r", "z1"))
			put("n2", nodeObj("n2", "r", "z2"))
			const nPods = 6
			for i := range nPods {
				name := fmt.Sprint("p", i)
				put("pod/"+name, podObj("ns", name, fmt.Sprintf("10.0.0.%d", i+1), fmt.Sprint("n", 1+i%2), map[string]string{"app": "web"}))
			}
			for k, svc := range []string{"s1", "s2", "s3"} {
				ports := []corev1.ServicePort{svcPort("http", 80)}
				if r.IntN(2) == 0 {
					ports = append(ports, svcPort("grpc", 90))
				}
				o := svcObj("ns", svc, fmt.Sprintf("10.96.0.%d", k+1), nil, ports...)
				o.Spec.PublishNotReadyAddresses = r.IntN(4) == 0
				put("svc/"+svc, o)
				// One slice or two; an address may be in both (an
				// endpoint moving), which rules out patching conditions.
				for j := range 1 + r.IntN(2) {
					var eps []sliceEP
					used := map[string]bool{}
					for range 1 + r.IntN(4) {
						i := r.IntN(nPods)
						e := sliceEP{addr: fmt.Sprintf("10.0.0.%d", i+1), pod: fmt.Sprint("p", i), ready: r.IntN(3) != 0}
						switch r.IntN(4) {
						case 0: // the pod's targetRef at another address
							e.addr = fmt.Sprintf("10.0.1.%d", r.IntN(nPods)+1)
						case 1: // no targetRef: the pod holding the address
							e.pod = ""
						}
						if used[e.addr] {
							continue
						}
						used[e.addr] = true
						eps = append(eps, e)
					}
					name := fmt.Sprintf("%s-%d", svc, j)
					s := sliceObj("ns", name, svc, discoveryv1.AddressTypeIPv4, 8080+int32(j), eps...)
					s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr("grpc"), Port: ptr[int32](9090)})
					put("slice/"+name, s)
				}
			}
			f := newFakeCluster(worldObjects(world)...)
			c := startController(t, f, Options{})
			ctx := context.Background()
			var history []string
			for range 12 {
				if r.IntN(2) == 0 {
					name := fmt.Sprint("p", r.IntN(nPods))
					p := world["pod/"+name].(*corev1.Pod).DeepCopy()
					p.Labels = map[string]string{"app": "web", "version": fmt.Sprint("v", r.IntN(3))}
					p.Spec.ServiceAccountName = []string{"", "sa1", "sa2"}[r.IntN(3)]
					world["pod/"+name] = p
					history = append(history, fmt.Sprintf("pod %s: version %s, account %q", name, p.Labels["version"], p.Spec.ServiceAccountName))
					_, err := f.CoreV1().Pods("ns").Update(ctx, p.DeepCopy(), metav1.UpdateOptions{})
					mustNot(t, err)
					continue
				}
				var names []string
				for _, k := range slices.Sorted(maps.Keys(world)) {
					if strings.HasPrefix(k, "slice/") {
						names = append(names, k)
					}
				}
				key := names[r.IntN(len(names))]
				s := world[key].(*discoveryv1.EndpointSlice).DeepCopy()
				if len(s.Endpoints) == 0 {
					continue
				}
				i := r.IntN(len(s.Endpoints))
				ready := !*s.Endpoints[i].Conditions.Ready
				s.Endpoints[i].Conditions.Ready = &ready
				world[key] = s
				history = append(history, fmt.Sprintf("slice %s: endpoint %s ready=%v", s.Name, s.Endpoints[i].Addresses[0], ready))
				_, err := f.DiscoveryV1().EndpointSlices("ns").Update(ctx, s.DeepCopy(), metav1.UpdateOptions{})
				mustNot(t, err)
			}
			want := dump(t, startController(t, newFakeCluster(worldObjects(world)...), Options{}))
			waitDump(t, c, want, "after\n  "+strings.Join(history, "\n  ")+"\nthe registry (want: a fresh one's over the final objects)")
		})
	}
}
