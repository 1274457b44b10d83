package address

import (
	"reflect"
	"testing"
)

// zeroDefaults are the Options fields whose default is their zero value,
// decided in defaults().
var zeroDefaults = map[string]bool{"ConfigCluster": true, "MultiNetwork": true, "ServiceScopes": true}

// TestOptionsDefaultsEveryField fails when a field of Options is added
// without a default in defaults() (or, for a zero default, here).
func TestOptionsDefaultsEveryField(t *testing.T) {
	o, err := Options{}.defaults()
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(o)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if v.Field(i).IsZero() != zeroDefaults[name] {
			t.Errorf("Options.%s: default is not decided in defaults() and zeroDefaults", name)
		}
	}
}
