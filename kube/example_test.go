package kube_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
)

func Example() {
	ready, port := true, int32(9080)
	client := fake.NewSimpleClientset(
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bookinfo", Name: "reviews"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Selector: map[string]string{"app": "reviews"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 9080}}},
		},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "bookinfo", Name: "reviews-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "reviews"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Port: &port}},
			Endpoints: []discoveryv1.Endpoint{{
				Addresses:  []string{"10.1.0.7"},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "bookinfo", Name: "reviews-v1"},
			}},
		},
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bookinfo", Name: "reviews-v1", Labels: map[string]string{"app": "reviews"}},
			Spec:       corev1.PodSpec{ServiceAccountName: "bookinfo-reviews"},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.0.7"},
		},
	)
	c, err := kube.New(client, kube.Options{ClusterID: "east"})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, svc := range c.Services() {
		fmt.Println(svc.Hostname, svc.Addresses["east"])
		for _, ep := range c.Endpoints(svc.Key(), registry.EndpointQuery{}) {
			fmt.Println(" ", ep.ServicePortName, ep.Address(), ep.Port, ep.Health, ep.ServiceAccount)
		}
	}
	cancel()
	<-done
	// Output:
	// reviews.bookinfo.svc.cluster.local [10.96.0.10/32]
	//   http 10.1.0.7 9080 Healthy spiffe://cluster.local/ns/bookinfo/sa/bookinfo-reviews
}
