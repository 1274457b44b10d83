package manifest_test

import (
	"fmt"
	"strings"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/internal/manifest"
)

func Example() {
	objs, err := manifest.Load(strings.NewReader(`
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: default}
spec:
  hosts: [api.example.com]
  resolution: DNS
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`))
	for _, o := range objs {
		if se, ok := o.(*networkingv1.ServiceEntry); ok {
			fmt.Println(se.Namespace, se.Name, se.Spec.Hosts, se.Spec.Resolution)
		}
	}
	for _, de := range manifest.DocumentErrors(err) {
		fmt.Println("skipped document", de.Document, de.Kind)
	}
	// Output:
	// default ext [api.example.com] DNS
	// skipped document 2 example.com/v1, Kind=Widget
}
