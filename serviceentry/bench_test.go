package serviceentry

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// BenchmarkSelectedPodChange is a label change of one of the ten pods a
// ServiceEntry's workloadSelector selects, in a namespace of n pods,
// handed in as the aggregate hands the kube controller's workload
// events: from HandleWorkload to the entry's endpoints event. What the
// entry's endpoints cost should grow with the pods it selects, not with
// the namespace's.
func BenchmarkSelectedPodChange(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			src, err := NewStaticSource(loadSE(b, `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: web, namespace: prod}
spec:
  hosts: [web.prod.internal]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 80, name: http, protocol: HTTP}]
  workloadSelector: {labels: {app: web}}
`))
			if err != nil {
				b.Fatal(err)
			}
			c, err := New(src, Options{})
			if err != nil {
				b.Fatal(err)
			}
			pod := func(i int, labels map[string]string) *model.WorkloadInstance {
				return &model.WorkloadInstance{
					Kind: model.KindPod, Namespace: "prod", Name: fmt.Sprint("pod-", i),
					Endpoint: model.Endpoint{
						Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})},
						Labels:    labels, Cluster: "c1",
					},
				}
			}
			for i := range n {
				app := fmt.Sprint("app-", i)
				if i < 10 {
					app = "web"
				}
				c.HandleWorkload(registry.WorkloadEvent{Type: model.EventAdd, Current: pod(i, map[string]string{"app": app})})
			}
			versions := [2]*model.WorkloadInstance{
				pod(5, map[string]string{"app": "web", "version": "v1"}),
				pod(5, map[string]string{"app": "web", "version": "v2"}),
			}
			host := model.Hostname("web.prod.internal")
			events := make(chan struct{}, 1)
			defer c.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(e registry.EndpointsEvent) {
				if e.Service.Hostname == host {
					select {
					case events <- struct{}{}:
					default:
					}
				}
			}})()
			defer running(b, c)()
			for !c.HasSynced() || len(c.Endpoints(model.ServiceKey{Hostname: host, Namespace: "prod"}, registry.EndpointQuery{})) != 10 {
				time.Sleep(time.Millisecond)
			}
			for len(events) > 0 {
				<-events
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c.HandleWorkload(registry.WorkloadEvent{Type: model.EventUpdate, Previous: versions[(i+1)%2], Current: versions[i%2]})
				select {
				case <-events:
				case <-time.After(5 * time.Second):
					b.Fatal("no endpoints event")
				}
			}
		})
	}
}
