package serviceentry

import (
	"reflect"
	"testing"
)

// TestOptionsDefaultsEveryField fails when a field of Options is added
// without a default in defaults().
func TestOptionsDefaultsEveryField(t *testing.T) {
	v := reflect.ValueOf(Options{}.defaults())
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Options.%s has no default in defaults()", v.Type().Field(i).Name)
		}
	}
	set := Options{ClusterID: "c1", TrustDomain: "td", DomainSuffix: "ds"}
	if got := set.defaults(); got.ClusterID != "c1" || got.TrustDomain != "td" || got.DomainSuffix != "ds" {
		t.Errorf("defaults() overrode set fields: %+v", got)
	}
}
