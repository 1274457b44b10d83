package sources

import (
	"slices"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// withDiagnostics is a registry.Discovery whose diagnostics include some of
// its own: problems found before any registry saw the objects, such as a
// manifest document that could not be decoded.
type withDiagnostics struct {
	registry.Discovery
	extra func() []model.Diagnostic
}

func (d withDiagnostics) Diagnostics() []model.Diagnostic {
	extra := d.extra()
	if len(extra) == 0 {
		return d.Discovery.Diagnostics()
	}
	out := append(slices.Clone(d.Discovery.Diagnostics()), extra...)
	model.SortDiagnostics(out)
	return out
}

// NetworkGateways returns the wrapped registry's gateways, if it knows
// any.
func (d withDiagnostics) NetworkGateways() []model.NetworkGateway {
	if gd, ok := d.Discovery.(registry.GatewayDiscovery); ok {
		return gd.NetworkGateways()
	}
	return nil
}
