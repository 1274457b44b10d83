package memory

import (
	"reflect"
	"testing"
)

// zeroDefaults are the fields whose default is their zero value, decided
// in withDefaults.
var zeroDefaults = map[string]bool{"Metrics": true}

// Every field of Options has a default: a field added without one fails
// here.
func TestOptionsDefaults(t *testing.T) {
	got := reflect.ValueOf(Options{}.withDefaults())
	for i := range got.NumField() {
		if got.Field(i).IsZero() != zeroDefaults[got.Type().Field(i).Name] {
			t.Errorf("Options.%s has no default", got.Type().Field(i).Name)
		}
	}
	// Set fields are kept.
	set := Options{ClusterID: "c9", Provider: 2}
	if set.withDefaults() != set {
		t.Errorf("withDefaults changed set fields: %+v", set.withDefaults())
	}
}
