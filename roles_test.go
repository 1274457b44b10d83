package meshreg_test

import (
	"testing"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/serviceentry"
)

// TestWhatImplementsWhat holds the table of the registry package's doc
// to the types: each cell, yes or no.
func TestWhatImplementsWhat(t *testing.T) {
	roles := []struct {
		name string
		is   func(any) bool
	}{
		{"Reader", func(v any) bool { _, ok := v.(registry.Reader); return ok }},
		{"Registry", func(v any) bool { _, ok := v.(registry.Registry); return ok }},
		{"GatewayDiscovery", func(v any) bool { _, ok := v.(registry.GatewayDiscovery); return ok }},
		{"WorkloadHandler", func(v any) bool { _, ok := v.(registry.WorkloadHandler); return ok }},
		{"Settler", func(v any) bool { _, ok := v.(registry.Settler); return ok }},
		{"MeshNetworksHandler", func(v any) bool { _, ok := v.(registry.MeshNetworksHandler); return ok }},
	}
	for _, tt := range []struct {
		name string
		v    any
		want []bool // in the order of roles
	}{
		{"kube.Controller", (*kube.Controller)(nil), []bool{true, true, true, true, true, true}},
		{"serviceentry.Controller", (*serviceentry.Controller)(nil), []bool{true, true, false, true, true, false}},
		{"memory.Registry", (*memory.Registry)(nil), []bool{true, true, true, false, false, false}},
		{"aggregate.Controller", (*aggregate.Controller)(nil), []bool{true, false, true, false, false, false}},
	} {
		for i, r := range roles {
			if got := r.is(tt.v); got != tt.want[i] {
				t.Errorf("%s is a registry.%s: %v, the registry package's doc says %v", tt.name, r.name, got, tt.want[i])
			}
		}
	}
}
