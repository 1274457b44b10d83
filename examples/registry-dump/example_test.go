package main

import (
	"context"
	"io"
	"os"
)

// registry-dump over a manifest file, as a table.
func Example() {
	f, err := os.CreateTemp("", "web-*.yaml")
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	_, _ = f.WriteString(`apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  clusterIP: 10.0.0.1
  ports: [{name: http, port: 80}]
`)
	f.Close()
	run(context.Background(), []string{"-f", f.Name()}, os.Stdout, io.Discard)
	// Output:
	// SERVICE                     NAMESPACE  PROVIDER    RESOLUTION    PORTS         VIPS                 ENDPOINTS
	// web.shop.svc.cluster.local  shop       Kubernetes  ClientSideLB  http:80/HTTP  Kubernetes=10.0.0.1  0
	//
	// 1 services, 0 endpoints, 0 workloads
	//
	// no diagnostics
}
