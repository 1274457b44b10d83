package kube

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshreg/meshreg/model"
)

// benchSlice returns a full slice of n pod endpoints (as the EndpointSlice
// controller writes them) with two ports.
func benchSlice(n int) *discoveryv1.EndpointSlice {
	yes, no := true, false
	http, grpc := "http", "grpc"
	hp, gp := int32(8080), int32(9090)
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-abcde",
			Labels: map[string]string{discoveryv1.LabelServiceName: "svc", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &http, Port: &hp}, {Name: &grpc, Port: &gp}},
	}
	for i := range n {
		node, zone := fmt.Sprintf("node-%d", i%7), "zone-a"
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.1.%d.%d", i/256, i%256)},
			Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
			NodeName:   &node, Zone: &zone,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: fmt.Sprintf("svc-%d", i)},
		})
	}
	return s
}

func benchService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", Labels: map[string]string{"app": "svc"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: "10.96.0.1", ClusterIPs: []string{"10.96.0.1"}, Selector: map[string]string{"app": "svc"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
				{Name: "grpc", Port: 9090, TargetPort: intstr.FromString("grpc")},
			},
		},
	}
}

var benchCfg = serviceConfig{cluster: "c1", domainSuffix: model.DefaultDomainSuffix, trustDomain: model.DefaultTrustDomain}

// BenchmarkMergeSlices converts one slice of 100 endpoints, as the
// informer cache holds it, into per-pod slice endpoints: the core of
// every slice change.
func BenchmarkMergeSlices(b *testing.B) {
	in := []*sliceInfo{newSliceInfo(benchSlice(100))}
	b.ReportAllocs()
	for b.Loop() {
		mergeSlices(in, "c1")
	}
}

// BenchmarkSliceToEndpoints is the whole conversion of a 100-endpoint
// slice into model endpoints: merge, then expand each pod into one
// endpoint per service port with its pod's metadata.
func BenchmarkSliceToEndpoints(b *testing.B) {
	in := []*sliceInfo{newSliceInfo(benchSlice(100))}
	svc, _ := convertService(benchService(), "", benchCfg)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-0", Labels: map[string]string{"app": "svc", "version": "v1", labelTLSMode: "istio"}},
		Spec:       corev1.PodSpec{NodeName: "node-0", ServiceAccountName: "svc"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.0.0"},
	}
	info := newPodInfo(pod, nil)
	env := podEnv{cluster: "c1", trustDomain: model.DefaultTrustDomain, node: model.Locality{Region: "r", Zone: "z"}}
	b.ReportAllocs()
	for b.Loop() {
		ses, _ := mergeSlices(in, "c1")
		var eps []*model.Endpoint
		for i := range ses {
			meta := podEndpoint(info, env)
			out := column{eps: make([]*model.Endpoint, len(svc.Ports)), n: 1}
			sliceEndpoints(out, svc, &ses[i], &meta, endpointHealth(ses[i].conditions, false), model.AlwaysDiscoverable, column{})
			eps = append(eps, out.eps...)
		}
		if len(eps) != 200 {
			b.Fatalf("%d endpoints", len(eps))
		}
	}
}

func BenchmarkConvertService(b *testing.B) {
	svc := benchService()
	b.ReportAllocs()
	for b.Loop() {
		convertService(svc, "", benchCfg)
	}
}

func BenchmarkStripSlice(b *testing.B) {
	s := benchSlice(100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stripSlice(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPodAddresses(b *testing.B) {
	pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: "10.1.2.3", PodIPs: []corev1.PodIP{{IP: "10.1.2.3"}}}}
	b.ReportAllocs()
	for b.Loop() {
		if a := podAddresses(&pod.Status); len(a) != 1 || a[0] != netip.AddrFrom4([4]byte{10, 1, 2, 3}) {
			b.Fatal(a)
		}
	}
}
