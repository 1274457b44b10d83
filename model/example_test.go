package model_test

import (
	"fmt"
	"slices"

	"github.com/meshreg/meshreg/model"
)

func ExampleDetectProtocol() {
	// A Kubernetes Service port: number, name, appProtocol, and whether
	// its transport is UDP.
	fmt.Println(model.DetectProtocol(9080, "http-web", "", false))
	fmt.Println(model.DetectProtocol(8080, "web", "kubernetes.io/h2c", false))
	fmt.Println(model.DetectProtocol(3306, "", "", false))
	fmt.Println(model.DetectProtocol(8000, "", "", false))
	// Output:
	// HTTP
	// HTTP2
	// TCP
	// UnsupportedProtocol
}

func ExampleParseLocality() {
	// The topology.istio.io/locality label uses '.' because label values
	// cannot hold '/'.
	l := model.ParseLocality("us-east1.us-east1-b")
	fmt.Println(l.Region, l.Zone, l.String())
	fmt.Println(model.Locality{Zone: "zone-x"})
	// Output:
	// us-east1 us-east1-b us-east1/us-east1-b
	// /zone-x
}

func ExampleService_DeepCopy() {
	svc := &model.Service{
		Hostname:  model.KubeServiceHostname("reviews", "default", model.DefaultDomainSuffix),
		Namespace: "default",
		Name:      "reviews",
		Ports:     []model.Port{{Name: "http", Port: 9080, Protocol: model.HTTP}},
	}
	// Published values are read-only: copy before changing.
	changed := svc.DeepCopy()
	changed.Ports[0].Port = 8080
	fmt.Println(svc.Key(), svc.Ports[0].Port, changed.Ports[0].Port, svc.Equals(changed))
	// Output:
	// default/reviews.default.svc.cluster.local 9080 8080 false
}

func ExampleSpiffeIdentity() {
	fmt.Println(model.SpiffeIdentity(model.DefaultTrustDomain, "default", "bookinfo-reviews"))
	// Output:
	// spiffe://cluster.local/ns/default/sa/bookinfo-reviews
}

func ExampleServiceKey_Compare() {
	keys := []model.ServiceKey{
		{Namespace: "prod", Hostname: "reviews.example.com"},
		{Namespace: "default", Hostname: "reviews.example.com"},
		{Namespace: "prod", Hostname: "details.example.com"},
	}
	slices.SortFunc(keys, model.ServiceKey.Compare)
	fmt.Println(keys)
	// Output:
	// [prod/details.example.com default/reviews.example.com prod/reviews.example.com]
}

// A Service's spec wins over the annotations; Kubernetes' PreferClose is
// Istio's PreferSameZone.
func ExampleParseTrafficDistribution() {
	td, err := model.ParseTrafficDistribution("PreferClose", "PreferSameNode", "")
	fmt.Printf("%q %v\n", td, err)
	td, err = model.ParseTrafficDistribution("", "", "PREFERSAMENODE")
	fmt.Printf("%q %v\n", td, err)
	td, err = model.ParseTrafficDistribution("", "Nearby", "PreferClose")
	fmt.Printf("%q %v\n", td, err)
	// Output:
	// "PreferSameZone" <nil>
	// "PreferSameNode" <nil>
	// "" annotation networking.istio.io/traffic-distribution="Nearby" is not PreferClose, PreferSameZone or PreferSameNode: the service has no traffic distribution
}
