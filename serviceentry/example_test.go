package serviceentry_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// A registry over ServiceEntries and WorkloadEntries loaded from a
// manifest.
func Example() {
	objs, err := manifest.Load(strings.NewReader(`
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vms, namespace: prod}
spec:
  hosts: [billing.prod.internal]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 80, name: http, protocol: HTTP, targetPort: 8080}]
  workloadSelector: {labels: {app: billing}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: vm-1, namespace: prod}
spec: {address: 10.0.0.1, labels: {app: billing}, serviceAccount: billing}
`))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	src, _ := serviceentry.NewStaticSource(objs...)
	c, _ := serviceentry.New(src, serviceentry.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for !c.HasSynced() {
		time.Sleep(time.Millisecond)
	}

	svc := c.GetService("billing.prod.internal")
	fmt.Println(svc.Hostname, svc.Resolution, svc.AutoAddresses)
	for _, ep := range c.Endpoints(svc.Key(), registry.EndpointQuery{}) {
		fmt.Println(ep.ServicePortName, ep.Address(), ep.Port, ep.TLSMode, ep.ServiceAccount, ep.Workload())
	}
	for _, w := range c.Workloads() {
		fmt.Println(w.Kind, w.Namespace, w.Name)
	}
	var _ model.Provider = c.Provider()
	cancel()
	<-done
	// Output:
	// billing.prod.internal ClientSideLB [240.240.173.50 2001:2::f0f0:ad32]
	// http 10.0.0.1 8080 istio spiffe://cluster.local/ns/prod/sa/billing prod/vm-1
	// WorkloadEntry prod vm-1
}
