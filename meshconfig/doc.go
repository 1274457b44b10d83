// Package meshconfig reads the parts of Istio's mesh config (the istio
// ConfigMap's "mesh" key) that meshreg's packages take as options:
//
//	mc, err := meshconfig.Parse(data)
//	se, _ := serviceentry.New(src, serviceentry.Options{Visibility: mc.ServiceEntryVisibility})
//	idx, _ := address.New(agg, address.Options{ServiceScopes: mc.ServiceScopes, MultiNetwork: true})
//
// It holds no state: a changed mesh config is parsed again and the
// options given to new components. meshNetworks, a ConfigMap key of its
// own, is read by aggregate.ParseMeshNetworks.
package meshconfig
