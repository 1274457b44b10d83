// Package ambientenv turns on Istio's ambient mode the way istiod's ambient
// profile does: by setting PILOT_ENABLE_AMBIENT=true in the environment
// before Istio's packages read it.
//
// Istio evaluates its feature flags from the environment while its packages
// are initialized (istio.io/istio/pilot/pkg/features: EnableAmbient and the
// flags registered with registerAmbient, whose defaults depend on it).
// Assigning features.EnableAmbient from main would be too late for those. Go
// initializes packages in import-path order among those whose imports are
// initialized; this package imports only "os" and its path (github.com/...)
// sorts before istio.io/..., so its init runs before any Istio package's.
// main checks features.EnableAmbient at start anyway.
//
// Import it for its side effect, from package main.
package ambientenv

import "os"

// Variable is the environment variable that enables ambient mode in istiod.
const Variable = "PILOT_ENABLE_AMBIENT"

func init() {
	if err := os.Setenv(Variable, "true"); err != nil {
		panic("ambient-bench: setting " + Variable + ": " + err.Error())
	}
}
