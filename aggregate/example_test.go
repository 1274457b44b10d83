package aggregate_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/serviceentry"
)

// Two clusters serve the same Kubernetes Service: the aggregate answers
// with one service carrying both clusters' VIPs, and keeps endpoints per
// cluster.
func Example() {
	east, err := memory.New(memory.Options{ClusterID: "east"})
	if err != nil {
		panic(err)
	}
	west, err := memory.New(memory.Options{ClusterID: "west"})
	if err != nil {
		panic(err)
	}
	for _, c := range []struct {
		reg     *memory.Registry
		vip, ip string
	}{{east, "10.96.0.10", "10.1.0.1"}, {west, "10.97.0.10", "10.2.0.1"}} {
		svc := memory.Service("reviews", "default").Port("http", 9080).VIP(c.vip).Cluster(c.reg.Cluster()).Build()
		c.reg.AddService(svc)
		c.reg.SetEndpoints(svc.Key(), memory.Endpoint(c.ip, 9080).Port("http").Cluster(c.reg.Cluster()).Build())
	}

	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		panic(err)
	}
	_ = agg.Add(east)
	_ = agg.Add(west)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- agg.Run(ctx) }()
	for !agg.HasSynced() {
		time.Sleep(time.Millisecond)
	}

	svc := agg.GetService("reviews.default.svc.cluster.local")
	fmt.Println(svc.Hostname, svc.Addresses["east"], svc.Addresses["west"])
	for _, ep := range agg.Endpoints(svc.Key(), registry.EndpointQuery{}) {
		fmt.Println(ep.Cluster, ep.Address())
	}
	fmt.Println("west only:", len(agg.Endpoints(svc.Key(), registry.EndpointQuery{Cluster: "west"})))
	cancel()
	<-done
	// Output:
	// reviews.default.svc.cluster.local [10.96.0.10/32] [10.97.0.10/32]
	// east 10.1.0.1
	// west 10.2.0.1
	// west only: 1
}

// Network gateways: a cluster's east-west gateway and one the mesh
// networks give by address, in one sorted list.
func ExampleController_NetworkGateways() {
	mesh, err := aggregate.ParseMeshNetworks([]byte(`
networks:
  vm-network:
    gateways:
    - address: 192.0.2.1
      port: 15443
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	east, err := memory.New(memory.Options{ClusterID: "east"})
	if err != nil {
		panic(err)
	}
	east.SetNetworkGateways(model.NetworkGateway{Network: "east-network", Address: "203.0.113.7", Port: 15443, Source: model.GatewayFromService})

	agg, err := aggregate.New(aggregate.Options{MeshNetworks: mesh})
	if err != nil {
		panic(err)
	}
	_ = agg.Add(east)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- agg.Run(ctx) }()
	for !agg.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, gw := range agg.NetworkGateways() {
		fmt.Println(gw, gw.Source)
	}
	cancel()
	<-done
	// Output:
	// east-network/east/203.0.113.7:15443 Service
	// vm-network//192.0.2.1:15443 MeshNetworks
}

// A remote cluster added by code, with its WorkloadEntries, as
// kube/multicluster adds one from a Secret: beside the cluster's kube
// registry, a serviceentry registry in WorkloadEntriesOnly mode under the
// cluster's ID. The VM registered in west joins west's Service and the
// config cluster's ServiceEntry, and keeps its cluster on both
// endpoints; east's Service of the same name does not select it.
func Example_remoteWorkloadEntries() {
	load := func(yaml string) []runtime.Object {
		objs, err := manifest.Load(strings.NewReader(yaml))
		if err != nil {
			panic(err)
		}
		return objs
	}
	ratings := `
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop}
spec:
  clusterIP: %s
  selector: {app: ratings}
  ports: [{name: http, port: 9080, targetPort: 9080}]
`
	// The config cluster east: its Services and its Istio configuration.
	eastKube, _ := kube.New(manifest.KubeClientset(load(fmt.Sprintf(ratings, "10.96.0.7"))), kube.Options{ClusterID: "east"})
	eastConfig, _ := serviceentry.NewStaticSource(load(`
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ratings-mesh, namespace: shop}
spec:
  hosts: [ratings.mesh.internal]
  addresses: [240.0.0.7]
  resolution: STATIC
  ports: [{number: 80, name: http, targetPort: 9080}]
  workloadSelector: {labels: {app: ratings}}
`)...)
	eastSE, _ := serviceentry.New(eastConfig, serviceentry.Options{ClusterID: "east"})

	// The remote cluster west: its Services, and its WorkloadEntries (over a
	// live cluster: serviceentry.NewInformerSource with
	// InformerOptions{WorkloadEntriesOnly: true, CRDPollInterval: ...}).
	westKube, _ := kube.New(manifest.KubeClientset(load(fmt.Sprintf(ratings, "10.97.0.7"))), kube.Options{ClusterID: "west"})
	westEntries, _ := serviceentry.NewStaticSource(load(`
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: ratings-vm, namespace: shop}
spec: {address: 10.5.0.7, labels: {app: ratings}}
`)...)
	westWEs, _ := serviceentry.New(westEntries, serviceentry.Options{ClusterID: "west", WorkloadEntriesOnly: true})

	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		panic(err)
	}
	for _, r := range []registry.Registry{eastKube, eastSE, westKube, westWEs} {
		_ = agg.Add(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- agg.Run(ctx) }()
	for !agg.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, host := range []model.Hostname{"ratings.shop.svc.cluster.local", "ratings.mesh.internal"} {
		svc := agg.GetService(host)
		for _, ep := range agg.Endpoints(svc.Key(), registry.EndpointQuery{}) {
			fmt.Println(host, ep.Cluster, ep.Address(), ep.Port, ep.Workload())
		}
	}
	// Removing west's WorkloadEntry registry takes the VM away from both
	// (from the ServiceEntry once east's registry has applied the
	// delete, as it applies every change, on its own goroutine).
	_ = agg.Remove(model.External, "west")
	entry := model.ServiceKey{Namespace: "shop", Hostname: "ratings.mesh.internal"}
	for len(agg.Endpoints(entry, registry.EndpointQuery{})) > 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("after removal:", len(agg.Endpoints(entry, registry.EndpointQuery{})), "and", len(agg.Workloads()), "workloads")
	cancel()
	<-done
	// Output:
	// ratings.shop.svc.cluster.local west 10.5.0.7 9080 shop/ratings-vm
	// ratings.mesh.internal west 10.5.0.7 9080 shop/ratings-vm
	// after removal: 0 and 0 workloads
}
