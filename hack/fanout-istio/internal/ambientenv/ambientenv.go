// Package ambientenv turns on Istio's ambient mode the way istiod's ambient
// profile does: by setting PILOT_ENABLE_AMBIENT=true in the environment
// before Istio reads it.
//
// Istio evaluates its feature flags from the environment while its packages
// are initialized (istio.io/istio/pilot/pkg/features: EnableAmbient, and the
// flags registered with registerAmbient whose default depends on it, such as
// PILOT_ENABLE_AMBIENT_WAYPOINTS or PILOT_ENABLE_SENDING_HBONE). Setting
// features.EnableAmbient from main would be too late for those. This package
// sets the variable in its init function, which runs before any Istio
// package's: since Go 1.21 packages are initialized in import-path order among
// those whose imports are initialized, this package imports only "os", and
// its path (github.com/...) sorts before istio.io/..., so it is initialized
// as soon as "os" is, before any package that reads the environment through
// Istio. main checks features.EnableAmbient at start anyway.
//
// Import it for its side effect, from package main:
//
//	import _ "github.com/meshreg/meshreg/hack/fanout-istio/internal/ambientenv"
package ambientenv

import "os"

// Variable is the environment variable that enables ambient mode in istiod.
const Variable = "PILOT_ENABLE_AMBIENT"

func init() {
	if err := os.Setenv(Variable, "true"); err != nil {
		panic("fanout-istio: setting " + Variable + ": " + err.Error())
	}
}
