package aggregate

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/meshreg/meshreg/registry"
)

// TestOptionsDefaults fails when a field of Options is added without
// deciding its default here and in defaults().
func TestOptionsDefaults(t *testing.T) {
	got := Options{}.defaults()
	check := map[string]func() bool{
		"Logger":             func() bool { return got.Logger != nil && got.Logger.Handler() == slog.DiscardHandler },
		"SyncTimeout":        func() bool { return got.SyncTimeout == 0 },
		"ShareWorkload":      func() bool { return got.ShareWorkload != nil },
		"MeshNetworks":       func() bool { return got.MeshNetworks == nil },
		"SyncPollInterval":   func() bool { return got.SyncPollInterval == 50*time.Millisecond },
		"SyncReportInterval": func() bool { return got.SyncReportInterval == registry.DefaultSyncReportInterval },
		"Metrics":            func() bool { return got.Metrics == nil },
	}
	v := reflect.ValueOf(got)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		ok, decided := check[name]
		switch {
		case !decided:
			t.Errorf("Options.%s has no decided default: add it to defaults() and to this test", name)
		case !ok():
			t.Errorf("Options.%s default = %v, not the documented one", name, v.Field(i))
		}
	}
	if set := (Options{SyncReportInterval: time.Minute}).defaults(); set.SyncReportInterval != time.Minute {
		t.Errorf("defaults overwrote SyncReportInterval: %v", set.SyncReportInterval)
	}
	if _, err := New(Options{SyncReportInterval: -1}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New with a negative SyncReportInterval = %v, want ErrInvalidOptions", err)
	}
}
