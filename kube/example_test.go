package kube_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsfake "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned/fake"

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

// mcsFake is the MCS API's fake clientset as a cluster with the MCS CRDs
// installed serves it. (client-go's informers must be told that the fake
// does not support the watch-list protocol.)
type mcsFake struct{ *mcsfake.Clientset }

func (mcsFake) IsWatchListSemanticsUnSupported() bool { return true }

func newMCSFake(objs ...runtime.Object) mcsFake {
	c := mcsfake.NewSimpleClientset(objs...)
	c.Resources = []*metav1.APIResourceList{{GroupVersion: "multicluster.x-k8s.io/v1alpha1", APIResources: []metav1.APIResource{
		{Name: "serviceexports", Namespaced: true, Kind: "ServiceExport"},
		{Name: "serviceimports", Namespaced: true, Kind: "ServiceImport"},
	}}}
	return mcsFake{c}
}

// Kubernetes Multi-Cluster Services: the cluster exports reviews, so its
// endpoints may reach other clusters, and imports it, so it has the
// ClusterSet host with the import's IP; it does not export ratings, whose
// endpoints are for its own proxies.
func ExampleMCSOptions() {
	ready, port := true, int32(9080)
	slice := func(name string, ip string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "bookinfo", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: new("http"), Port: &port}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		}
	}
	service := func(name, ip string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bookinfo", Name: name},
			Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Name: "http", Port: 9080}}},
		}
	}
	client := fake.NewSimpleClientset(service("reviews", "10.96.0.10"), slice("reviews", "10.1.0.7"),
		service("ratings", "10.96.0.20"), slice("ratings", "10.1.0.8"))
	mcs := newMCSFake(
		&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "bookinfo", Name: "reviews"}},
		&mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "bookinfo", Name: "reviews"},
			Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, IPs: []string{"242.0.0.10"}}},
	)
	c, err := kube.New(client, kube.Options{ClusterID: "east", MCS: kube.MCSOptions{Client: mcs, ServiceDiscovery: true, Host: true}})
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
			fmt.Println(" ", ep.Address(), ep.Discoverability)
		}
	}
	cancel()
	<-done
	// Output:
	// ratings.bookinfo.svc.cluster.local [10.96.0.20/32]
	//   10.1.0.8 DiscoverableFromSameCluster
	// reviews.bookinfo.svc.cluster.local [10.96.0.10/32]
	//   10.1.0.7 AlwaysDiscoverable
	// reviews.bookinfo.svc.clusterset.local [242.0.0.10/32]
	//   10.1.0.7 AlwaysDiscoverable
}

// A control plane that already runs a SharedInformerFactory shares its
// informers with the controller: the factory starts them, the controller
// adds its handlers when it runs and removes them when it stops.
func ExampleFactoryInformers() {
	client := fake.NewSimpleClientset(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bookinfo", Name: "ratings"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.11", Ports: []corev1.ServicePort{{Name: "http", Port: 9080}}},
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := kube.New(nil, kube.Options{ClusterID: "east", Informers: kube.FactoryInformers(factory)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	if err := registry.WaitSynced(ctx, c); err != nil {
		panic(err)
	}
	for _, svc := range c.Services() {
		fmt.Println(svc.Hostname, svc.Addresses["east"])
	}
	cancel()
	<-done
	factory.Shutdown()
	// Output:
	// ratings.bookinfo.svc.cluster.local [10.96.0.11/32]
}
