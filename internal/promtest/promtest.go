// Package promtest reads Prometheus series in tests: the value of one
// series, by name and label pairs, from a Gatherer, and a wait for a
// value.
package promtest

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Value returns the value of the first series of name in g whose labels
// include the given pairs (name, value, name, value...): a counter's or
// gauge's value, a histogram's sample count; 0 when there is none.
func Value(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	v, _, err := Read(g, name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Sum returns the sum of the samples of the first histogram series of
// name in g whose labels include the given pairs; 0 when there is none.
func Sum(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	_, sum, err := Read(g, name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Read returns the value of a series as Value does, and, for a
// histogram, the sum of its samples; the error is g's.
func Read(g prometheus.Gatherer, name string, labels ...string) (value, sum float64, err error) {
	fams, err := g.Gather()
	if err != nil {
		return 0, 0, err
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue(), 0, nil
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue(), 0, nil
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum(), nil
			}
		}
	}
	return 0, 0, nil
}

// Eventually waits up to 10 seconds for a series to have the value want,
// and fails the test if it does not.
func Eventually(t testing.TB, g prometheus.Gatherer, want float64, name string, labels ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := Value(t, g, name, labels...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %v, want %v", name, labels, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
