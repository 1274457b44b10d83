package kube

import (
	"net/netip"
	"testing"

	"github.com/meshreg/meshreg/internal/intern"
	"github.com/meshreg/meshreg/model"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
)

// TestTransformsKeepWhatConversionReads converts full objects and their
// stripped forms and expects the same results, and checks that the bulk
// is gone.
func TestTransformsKeepWhatConversionReads(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", Labels: map[string]string{"a": "b"},
			Annotations: map[string]string{annotationExportTo: ".", model.TrafficDistributionAnnotation: "PreferSameNode",
				"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1", Selector: map[string]string{"app": "a"},
			Ports:           []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("web"), NodePort: 30000}},
			SessionAffinity: corev1.ServiceAffinityClientIP},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}},
	}
	stripped, _ := stripService(svc)
	s := stripped.(*corev1.Service)
	a, _ := convertService(svc, "", testServiceConfig)
	b, _ := convertService(s, "", testServiceConfig)
	if !a.Equals(b) {
		t.Errorf("stripped service converts differently:\n%s", cmp.Diff(a, b))
	}
	if a.TrafficDistribution != model.TrafficPreferSameNode {
		t.Errorf("the test's service has traffic distribution %q, want PreferSameNode from its annotation", a.TrafficDistribution)
	}
	if len(s.ManagedFields) > 0 || len(s.Annotations) != 2 || s.Spec.SessionAffinity != "" {
		t.Errorf("service not stripped: %+v", s)
	}
	again, _ := stripService(s)
	if !cmp.Equal(again, s) {
		t.Error("stripService is not idempotent")
	}

	pod := podObj("ns", "p", "10.0.0.1", "n", map[string]string{"app": "a"})
	always := corev1.ContainerRestartPolicyAlways
	pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "img", Ports: []corev1.ContainerPort{
		{Name: "http", ContainerPort: 80}, {ContainerPort: 81}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
		{Name: "grpc", ContainerPort: 90, Protocol: corev1.ProtocolTCP}}}}
	pod.Spec.InitContainers = []corev1.Container{
		{Name: "init", Ports: []corev1.ContainerPort{{Name: "setup", ContainerPort: 1000}}},
		{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "admin", ContainerPort: 15000}}},
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status.PodIPs = []corev1.PodIP{{IP: "fd00::1"}, {IP: "10.0.0.1"}}
	pod.GenerateName = "web-5d8f7c9b4-"
	pod.Labels["pod-template-hash"] = "5d8f7c9b4"
	pod.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-5d8f7c9b4", Controller: ptr(true)}}
	pod.Annotations = map[string]string{model.AmbientRedirectionAnnotation: "enabled", "other": "x"}
	pod.Spec.ServiceAccountName = "sa"
	pod.Spec.Subdomain, pod.Spec.HostNetwork = "web", true
	now := metav1.Now()
	pod.DeletionTimestamp = &now
	stripPod := stripPods(intern.NewMaps())
	sp, _ := stripPod(pod)
	p := sp.(*podInfo)
	// Its labels are interned: a pod with equal labels holds the same map.
	twin := pod.DeepCopy()
	twin.Name = "twin"
	st, _ := stripPod(twin)
	if p.shared == nil || st.(*podInfo).shared != p.shared {
		t.Error("equal pod labels were not interned into one map")
	}
	want := &podInfo{
		objectMeta:     objectMeta{namespace: "ns", name: "p", labels: map[string]string{"app": "a", "pod-template-hash": "5d8f7c9b4"}},
		nodeName:       "n",
		serviceAccount: "sa",
		phase:          corev1.PodRunning,
		ready:          true, deleting: true, hostNetwork: true,
		hostname: "p", subdomain: "web", // the pod's name when spec.hostname is unset
		addrs: []netip.Addr{netip.MustParseAddr("fd00::1"), netip.MustParseAddr("10.0.0.1")}, // in the pod's order
		// Named TCP ports (unset protocol is TCP), then those of native sidecars.
		ports: []namedPort{{name: "http", port: 80}, {name: "grpc", port: 90}, {name: "admin", port: 15000}},
		// The Deployment of its ReplicaSet; the redirection annotation.
		workloadName: "web", redirected: true,
	}
	if diff := cmp.Diff(want, p, cmp.AllowUnexported(podInfo{}, objectMeta{}, namedPort{}, podMemo{}), cmpopts.IgnoreFields(podInfo{}, "shared"), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("stripPod (-want +got):\n%s", diff)
	}
	if again, _ := stripPod(p); again != any(p) {
		t.Error("stripPod is not idempotent")
	}
	// The informers key and index the lean form like the API object.
	if key, err := cache.MetaNamespaceKeyFunc(p); err != nil || key != "ns/p" {
		t.Errorf("key of the lean pod = %q, %v", key, err)
	}
	if ns, err := cache.MetaNamespaceIndexFunc(p); err != nil || len(ns) != 1 || ns[0] != "ns" {
		t.Errorf("namespace index of the lean pod = %v, %v", ns, err)
	}

	sl := sliceObj("ns", "s1", "s", discoveryv1.AddressTypeIPv4, 80, sliceEP{"10.0.0.1", "p", true})
	sl.Labels["endpointslice.kubernetes.io/managed-by"] = "x"
	sl.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z"}}}
	sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{"bogus", "10.0.0.2"}, NodeName: ptr("n2"),
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "q"}})
	sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: ptr("big"), Port: ptr(int32(70000))})
	ss, _ := stripSlice(sl)
	si := ss.(*sliceInfo)
	wantSlice := &sliceInfo{
		objectMeta:  objectMeta{namespace: "ns", name: "s1"},
		service:     "s",
		addressType: discoveryv1.AddressTypeIPv4,
		endpoints: []sliceEndpointInfo{
			{addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, pod: types.NamespacedName{Namespace: "ns", Name: "p"}, conditions: conditions{ready: isTrue, serving: isTrue, terminating: isFalse},
				hints: &model.Hints{ForZones: []string{"z"}}},
			// A targetRef to another namespace's pod is not kept.
			{addrs: []netip.Addr{netip.MustParseAddr("10.0.0.2")}, nodeName: "n2"},
		},
		ports:       portNumbers{{name: "http", num: 80}},
		badPorts:    []badPort{{name: "big", port: 70000}},
		badAddrs:    []string{"bogus"},
		foreignRefs: []foreignRef{{addr: "10.0.0.2", pod: types.NamespacedName{Namespace: "other", Name: "q"}}},
		// The addresses, sorted, with the endpoints listing them.
		claims: []sliceClaim{{addr: netip.MustParseAddr("10.0.0.1"), ep: 0}, {addr: netip.MustParseAddr("10.0.0.2"), ep: 1}},
	}
	if diff := cmp.Diff(wantSlice, si, cmp.AllowUnexported(sliceInfo{}, objectMeta{}, sliceEndpointInfo{}, conditions{}, badPort{}, portNumber{}, foreignRef{}, sliceClaim{}),
		cmp.Comparer(func(a, b netip.Addr) bool { return a == b }), cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
		t.Errorf("stripSlice (-want +got):\n%s", diff)
	}
	if again, _ := stripSlice(si); again != any(si) {
		t.Error("stripSlice is not idempotent")
	}
	if key, err := cache.MetaNamespaceKeyFunc(si); err != nil || key != "ns/s1" {
		t.Errorf("key of the lean slice = %q, %v", key, err)
	}
	node := nodeObj("n", "r", "z")
	node.Labels["kubernetes.io/hostname"] = "n"
	node.Status.Capacity = corev1.ResourceList{}
	sn, _ := stripNode(node)
	if got := sn.(*corev1.Node); len(got.Labels) != 2 || nodeLocality(got.Labels) != nodeLocality(node.Labels) {
		t.Errorf("node strip: %+v", got)
	}
	sns, _ := stripNamespace(nsObj("ns", map[string]string{"a": "b"}))
	if got := sns.(*corev1.Namespace); got.Labels["a"] != "b" {
		t.Errorf("namespace strip: %+v", got)
	}

	// Other objects, such as tombstones, pass through.
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod}
	for _, tr := range []cache.TransformFunc{stripService, stripSlice, stripPods(intern.NewMaps()), stripNode, stripNamespace} {
		if out, err := tr(tomb); err != nil || out != any(tomb) {
			t.Errorf("tombstone not passed through: %v %v", out, err)
		}
	}
}

func TestUnwrapTombstone(t *testing.T) {
	pod := podObj("ns", "p", "", "", nil)
	if got, ok := unwrap[*corev1.Pod](pod); !ok || got != pod {
		t.Error("plain object not unwrapped")
	}
	if got, ok := unwrap[*corev1.Pod](cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod}); !ok || got != pod {
		t.Error("tombstone not unwrapped")
	}
	if _, ok := unwrap[*corev1.Pod](cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: "junk"}); ok {
		t.Error("tombstone of another type unwrapped")
	}
	if _, ok := unwrap[*corev1.Service](pod); ok {
		t.Error("wrong type unwrapped")
	}
}

func TestSlicePorts(t *testing.T) {
	port := func(name string, num int32) discoveryv1.EndpointPort {
		return discoveryv1.EndpointPort{Name: ptr(name), Port: ptr(num)}
	}
	tests := []struct {
		name  string
		ports []discoveryv1.EndpointPort
		want  portNumbers
	}{
		{"none", nil, portNumbers{}},
		{"one", []discoveryv1.EndpointPort{port("http", 80)}, portNumbers{{"http", 80}}},
		{"sorted by name", []discoveryv1.EndpointPort{port("tcp", 5), port("grpc", 9090), port("http", 80)},
			portNumbers{{"grpc", 9090}, {"http", 80}, {"tcp", 5}}},
		{"first of a repeated name wins", []discoveryv1.EndpointPort{port("http", 80), port("a", 1), port("http", 81), port("http", 82)},
			portNumbers{{"a", 1}, {"http", 80}}},
		{"unnamed", []discoveryv1.EndpointPort{{Port: ptr(int32(53))}, port("dns", 54)}, portNumbers{{"", 53}, {"dns", 54}}},
		{"no number or out of range skipped", []discoveryv1.EndpointPort{{Name: ptr("all")}, port("big", 70000), port("zero", 0), port("http", 65535)},
			portNumbers{{"http", 65535}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slicePorts(tt.ports)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(portNumber{})); diff != "" {
				t.Fatalf("slicePorts (-want +got):\n%s", diff)
			}
			for _, p := range tt.want {
				if num, ok := got.get(p.name); !ok || num != p.num {
					t.Errorf("get(%q) = %d, %v; want %d", p.name, num, ok, p.num)
				}
			}
			if num, ok := got.get("missing"); ok {
				t.Errorf("get(missing) = %d, true", num)
			}
		})
	}
}

// FuzzSlicePorts checks slicePorts against the rule it implements, read
// off a map: for each name, the number of the first port of that name
// with a number in range; nothing for names without one. The list is
// sorted by name, one entry per name. Each input byte pair is a port:
// its name (one of a few, or none) and its number (or no number).
func FuzzSlicePorts(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 80, 2, 90, 1, 81})
	f.Add([]byte{0, 0, 3, 255, 3, 7, 4, 1, 4, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		names := []string{"", "http", "grpc", "a", "zz-long-name"}
		var ports []discoveryv1.EndpointPort
		for i := 0; i+1 < len(b); i += 2 {
			p := discoveryv1.EndpointPort{}
			if n := int(b[i]) % (len(names) + 1); n < len(names) {
				p.Name = ptr(names[n])
			}
			switch num := int32(b[i+1]); {
			case num == 255: // no number
			case num > 200: // out of range
				p.Port = ptr(70000 + num)
			default:
				p.Port = ptr(num) // 0 is out of range too
			}
			ports = append(ports, p)
		}
		want := map[string]uint32{}
		for _, p := range ports {
			if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
				continue
			}
			if _, ok := want[ptrOr(p.Name)]; !ok {
				want[ptrOr(p.Name)] = uint32(*p.Port)
			}
		}
		got := slicePorts(ports)
		if len(got) != len(want) {
			t.Fatalf("slicePorts(%v) = %v, want one entry per name of %v", ports, got, want)
		}
		for i, p := range got {
			if i > 0 && got[i-1].name >= p.name {
				t.Fatalf("not sorted by name, one per name: %v", got)
			}
			if num, ok := want[p.name]; !ok || num != p.num {
				t.Errorf("port %q = %d, want %d (%v)", p.name, p.num, num, ok)
			}
		}
		for _, name := range append(names, "missing") {
			num, ok := got.get(name)
			if w, wok := want[name]; ok != wok || num != w {
				t.Errorf("get(%q) = %d, %v; want %d, %v", name, num, ok, w, wok)
			}
		}
	})
}
