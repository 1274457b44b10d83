package meshconfig_test

import (
	"fmt"

	"github.com/meshreg/meshreg/meshconfig"
)

// The parts of the mesh config meshreg reads, from the istio ConfigMap's
// "mesh" key.
func Example() {
	mc, err := meshconfig.Parse([]byte(`
trustDomain: example.org
serviceScopeConfigs:
- servicesSelector: {matchLabels: {istio.io/global: "true"}}
  scope: GLOBAL
serviceEntryVisibility:
  defaultVisibility: NAMESPACE
`))
	if err != nil {
		panic(err)
	}
	global := mc.ServiceScopes[0].Global && mc.ServiceScopes[0].Selects(nil, map[string]string{"istio.io/global": "true"})
	fmt.Println(mc.TrustDomain, global, mc.ServiceEntryVisibility.For(map[string]string{"team": "a"}))
	// Output: example.org true Namespace
}
