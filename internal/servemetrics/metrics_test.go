package servemetrics_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshreg/meshreg/internal/servemetrics"
)

// refusing is a Registerer that refuses the collectors of one metric
// and counts those it holds.
type refusing struct {
	*prometheus.Registry
	name string
	held *int
}

func (r refusing) Unregister(c prometheus.Collector) bool {
	ok := r.Registry.Unregister(c)
	if ok {
		*r.held--
	}
	return ok
}

func (r refusing) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 10)
	c.Describe(ch)
	close(ch)
	for d := range ch {
		if strings.Contains(d.String(), `"`+r.name+`"`) {
			return errors.New("refused")
		}
	}
	err := r.Registry.Register(c)
	if err == nil {
		*r.held++
	}
	return err
}

func TestNew(t *testing.T) {
	m, err := servemetrics.New(nil)
	if m != nil || err != nil {
		t.Errorf("New(nil) = %v, %v; want nil, nil", m, err)
	}
	m.StreamOpened("envoy") // off: does nothing

	// A Registerer that refuses one metric: an error, and nothing left
	// registered.
	held := 0
	reg := refusing{prometheus.NewRegistry(), "meshreg_xds_nacks_total", &held}
	if _, err := servemetrics.New(reg); err == nil {
		t.Fatal("New on a Registerer that refuses a metric: no error")
	}
	if held != 0 {
		t.Errorf("after a refusal, %d collectors stay registered", held)
	}

	// A second server on the same Registerer shares the first's series.
	prom := prometheus.NewRegistry()
	a, err := servemetrics.New(prom)
	if err != nil {
		t.Fatal(err)
	}
	b, err := servemetrics.New(prom)
	if err != nil {
		t.Fatalf("a second New on the same Registerer: %v", err)
	}
	a.Pending("envoy", 2)
	b.Pending("envoy", -1)
	fams, _ := prom.Gather()
	got := -1.0
	for _, f := range fams {
		if f.GetName() == "meshreg_xds_pending" {
			got = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if got != 1 {
		t.Errorf("pending after +2 from one server and -1 from the other = %v, want 1", got)
	}
}
