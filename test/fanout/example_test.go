package fanout_test

import (
	"fmt"

	"github.com/meshreg/meshreg/test/fanout"
)

// A world's objects, and what a sidecar of it sees: its namespace's
// Services and the shared namespace's.
func ExampleWorld() {
	w := fanout.World{Namespaces: 2, Services: 3, SharedServices: 4, Endpoints: 2}
	kinds := map[string]int{}
	for _, o := range w.Objects() {
		kinds[o.GetObjectKind().GroupVersionKind().Kind]++
	}
	fmt.Println(kinds["Namespace"], "namespaces,", kinds["Service"], "Services,", kinds["Pod"], "Pods,", kinds["EndpointSlice"], "EndpointSlices")
	fmt.Println("a sidecar sees", w.Services+w.SharedServices, "Services, such as", fanout.Hostname(fanout.SharedNamespace, 0))
	// Output:
	// 3 namespaces, 10 Services, 20 Pods, 10 EndpointSlices
	// a sidecar sees 7 Services, such as svc-0.shared.svc.cluster.local
}
