package sources_test

import (
	"context"
	"fmt"
	"testing/fstest"
	"time"

	"github.com/meshreg/meshreg/test/sources"
)

// Manifests for two clusters, here from memory, become one aggregate.
func Example() {
	svc := func(ip string) []byte {
		return []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n" +
			"spec: {clusterIP: " + ip + ", ports: [{name: http, port: 80}]}\n")
	}
	b, err := sources.Build(sources.Config{Clusters: []sources.Cluster{
		{ID: "east", FS: fstest.MapFS{"web.yaml": {Data: svc("10.0.0.1")}}, Manifests: "web.yaml"},
		{ID: "west", FS: fstest.MapFS{"web.yaml": {Data: svc("10.1.0.1")}}, Manifests: "web.yaml"},
	}})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Aggregate.Run(ctx) }()
	for !b.Aggregate.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	for _, s := range b.Discovery.Services() {
		fmt.Println(s.Hostname, s.Addresses["east"], s.Addresses["west"])
	}
	cancel()
	<-done
	// Output:
	// web.shop.svc.cluster.local [10.0.0.1/32] [10.1.0.1/32]
}
