package debug_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/registry/memory"
)

// The server's metrics and, in the same Prometheus registry, those of a
// registry built with it, as /metrics reports them.
func ExampleNewMetrics() {
	prom := prometheus.NewRegistry()
	reg, err := memory.New(memory.Options{ClusterID: "east", Metrics: prom})
	if err != nil {
		panic(err)
	}
	svc := memory.Service("web", "shop").Port("http", 80).Build()
	reg.AddService(svc)
	reg.SetEndpoints(svc.Key(), memory.Endpoint("10.1.0.1", 80).Port("http").Build())

	m := debug.NewMetrics(prom, nil)
	m.ObservePush(2, time.Millisecond)
	h := debug.NewHandler(reg, nil, nil, m, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "meshreg_services") || strings.HasPrefix(line, "meshreg_endpoints{") || strings.HasPrefix(line, "meshreg_xds_pushes_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// meshreg_endpoints{cluster="east",registry="Kubernetes"} 1
	// meshreg_services{cluster="east",registry="Kubernetes"} 1
	// meshreg_xds_pushes_total 1
}
