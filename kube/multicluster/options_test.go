package multicluster

import (
	"reflect"
	"testing"
)

// TestOptionsDefaultsEveryField fails when a field of Options or
// WorkloadEntryOptions is added without a default decided in defaults()
// (or, for a zero default or a required field, listed here).
func TestOptionsDefaultsEveryField(t *testing.T) {
	for _, tc := range []struct {
		v     any
		zeros map[string]bool
	}{
		{Options{}.defaults(), map[string]bool{"Factory": true, "SkipWorkloadEntries": true, "LocalCluster": true, "ResyncPeriod": true}},
		{WorkloadEntryOptions{}.defaults(), map[string]bool{"Registry": true, "ResyncPeriod": true}},
	} {
		v := reflect.ValueOf(tc.v)
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if v.Field(i).IsZero() != tc.zeros[name] {
				t.Errorf("%s.%s: default is not decided in defaults() and listed here", v.Type().Name(), name)
			}
		}
	}
}
