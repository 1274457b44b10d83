package debug_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/meshreg/meshreg/examples/xds-server/internal/debug"
	"github.com/meshreg/meshreg/registry/memory"
)

// The registry's sizes, as /metrics reports them.
func ExampleNewMetrics() {
	reg := memory.New(memory.Options{})
	svc := memory.Service("web", "shop").Port("http", 80).Build()
	reg.AddService(svc)
	reg.SetEndpoints(svc.Key(), memory.Endpoint("10.1.0.1", 80).Port("http").Build())

	m := debug.NewMetrics(reg, nil)
	h := debug.NewHandler(reg, nil, nil, m, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "meshreg_registry_") {
			fmt.Println(line)
		}
	}
	// Output:
	// meshreg_registry_diagnostics{severity="Error"} 0
	// meshreg_registry_diagnostics{severity="Warning"} 0
	// meshreg_registry_endpoints 1
	// meshreg_registry_pending_endpoints 0
	// meshreg_registry_services 1
	// meshreg_registry_workloads 0
}
