package serviceentry

import (
	"reflect"
	"testing"
	"time"

	"github.com/meshreg/meshreg/registry"
)

// zeroDefaults are the Options fields whose default is their zero value,
// each decided in defaults().
var zeroDefaults = map[string]bool{"NamespaceSelector": true, "Visibility": true, "WorkloadEntriesOnly": true, "Metrics": true}

// TestOptionsDefaultsEveryField fails when a field of Options is added
// without a default in defaults() (or, for a zero default, here).
func TestOptionsDefaultsEveryField(t *testing.T) {
	v := reflect.ValueOf(Options{}.defaults())
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if v.Field(i).IsZero() != zeroDefaults[name] {
			t.Errorf("Options.%s: default is not decided in defaults() and zeroDefaults", name)
		}
	}
	if got := (Options{}).defaults().SyncReportInterval; got != registry.DefaultSyncReportInterval {
		t.Errorf("SyncReportInterval default = %v, want %v", got, registry.DefaultSyncReportInterval)
	}
	set := Options{ClusterID: "c1", TrustDomain: "td", DomainSuffix: "ds", SyncReportInterval: time.Minute}
	if got := set.defaults(); got.ClusterID != "c1" || got.TrustDomain != "td" || got.DomainSuffix != "ds" || got.SyncReportInterval != time.Minute {
		t.Errorf("defaults() overrode set fields: %+v", got)
	}
}
