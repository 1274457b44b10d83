package debug_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/registry/memory"
)

// /metrics serves the Prometheus registry the handler is given, where a
// registry built with it keeps its metrics.
func ExampleNewHandler() {
	prom := prometheus.NewRegistry()
	reg, err := memory.New(memory.Options{ClusterID: "east", Metrics: prom})
	if err != nil {
		panic(err)
	}
	svc := memory.Service("web", "shop").Port("http", 80).Build()
	reg.AddService(svc)
	reg.SetEndpoints(svc.Key(), memory.Endpoint("10.1.0.1", 80).Port("http").Build())

	h := debug.NewHandler(reg, debughttp.Options{}, nil, prom, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "meshreg_services") || strings.HasPrefix(line, "meshreg_endpoints{") {
			fmt.Println(line)
		}
	}
	// Output:
	// meshreg_endpoints{cluster="east",registry="Kubernetes"} 1
	// meshreg_services{cluster="east",registry="Kubernetes"} 1
}
