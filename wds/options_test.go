package wds

import (
	"log/slog"
	"reflect"
	"testing"
)

// zeroDefaults are the fields whose default is their zero value.
var zeroDefaults = map[string]bool{"Metrics": true}

// Every field of Options has a default: a field added without one fails
// here.
func TestOptionsDefaults(t *testing.T) {
	got := reflect.ValueOf(Options{}.defaults())
	for i := range got.NumField() {
		if got.Field(i).IsZero() != zeroDefaults[got.Type().Field(i).Name] {
			t.Errorf("Options.%s has no default", got.Type().Field(i).Name)
		}
	}
	// Set fields are kept.
	log := slog.New(slog.DiscardHandler)
	if got := (Options{Logger: log}).defaults(); got.Logger != log {
		t.Errorf("defaults replaced the Logger")
	}
}
