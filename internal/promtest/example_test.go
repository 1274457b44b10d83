package promtest_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/internal/promtest"
)

// One series of a labelled counter, read by its labels.
func Example() {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "Requests."}, []string{"code"})
	reg.MustRegister(c)
	c.WithLabelValues("200").Add(3)
	c.WithLabelValues("500").Inc()
	ok, _, _ := promtest.Read(reg, "requests_total", "code", "200")
	failed, _, _ := promtest.Read(reg, "requests_total", "code", "500")
	fmt.Println(ok, failed)
	// Output:
	// 3 1
}
