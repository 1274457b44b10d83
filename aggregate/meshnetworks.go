package aggregate

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"google.golang.org/protobuf/encoding/protojson"
	meshv1alpha1 "istio.io/api/mesh/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/model"
)

// ParseMeshNetworks reads Istio's meshNetworks YAML (or JSON): the value
// of the "meshNetworks" key of the istio ConfigMap, or istiod's
// networks file:
//
//	networks:
//	  network-a:
//	    endpoints:
//	    - fromRegistry: cluster-a
//	    - fromCidr: 10.20.0.0/16
//	    gateways:
//	    - registryServiceName: istio-eastwestgateway.istio-system.svc.cluster.local
//	      port: 15443
//	    - address: 192.0.2.1
//	      port: 15443
//
// Fields Istio's schema does not have are an error, and so is what
// Istio's validation refuses (see Options.MeshNetworks); a gateway's
// locality is read and not kept.
func ParseMeshNetworks(data []byte) (*model.MeshNetworks, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("mesh networks: %w", err)
	}
	var in meshv1alpha1.MeshNetworks
	if err := protojson.Unmarshal(js, &in); err != nil {
		return nil, fmt.Errorf("mesh networks: %w", err)
	}
	out := &model.MeshNetworks{Networks: map[model.NetworkID]model.MeshNetwork{}}
	for name, nw := range in.GetNetworks() {
		var m model.MeshNetwork
		for i, ep := range nw.GetEndpoints() {
			e := model.MeshNetworkEndpoints{FromRegistry: model.ClusterID(ep.GetFromRegistry())}
			if c := ep.GetFromCidr(); c != "" {
				p, err := netip.ParsePrefix(c)
				if err != nil {
					return nil, fmt.Errorf("mesh networks: network %s: endpoints[%d]: fromCidr %q: %w", name, i, c, err)
				}
				e.FromCIDR = p
			}
			m.Endpoints = append(m.Endpoints, e)
		}
		for _, gw := range nw.GetGateways() {
			m.Gateways = append(m.Gateways, model.MeshNetworkGateway{
				Address:             gw.GetAddress(),
				RegistryServiceName: model.Hostname(gw.GetRegistryServiceName()),
				Port:                gw.GetPort(),
			})
		}
		out.Networks[model.NetworkID(name)] = m
	}
	if err := validateMeshNetworks(out); err != nil {
		return nil, err
	}
	return out, nil
}

// validateMeshNetworks refuses what Istio's validation refuses: a
// registry name that is not a DNS-1123 label, a registryServiceName that
// is not a DNS name, a gateway address that is neither an IP nor a DNS
// name, a gateway port outside 1-65535; and, which a Go value allows and
// Istio's schema does not, an item with both of its alternatives set. The
// error names the network and the item.
func validateMeshNetworks(m *model.MeshNetworks) error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m.Networks)) {
		nw := m.Networks[name]
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("network %s: "+format, append([]any{name}, args...)...))
		}
		for i, ep := range nw.Endpoints {
			switch {
			case ep.FromRegistry != "" && ep.FromCIDR.IsValid():
				bad("endpoints[%d]: both fromRegistry and fromCidr are set", i)
			case ep.FromRegistry != "" && len(validation.IsDNS1123Label(string(ep.FromRegistry))) > 0:
				bad("endpoints[%d]: fromRegistry %q is not a DNS-1123 label", i, ep.FromRegistry)
			}
		}
		for i, gw := range nw.Gateways {
			switch {
			case gw.Address != "" && gw.RegistryServiceName != "":
				bad("gateways[%d]: both address and registryServiceName are set", i)
			case gw.RegistryServiceName != "" && len(validation.IsDNS1123Subdomain(string(gw.RegistryServiceName))) > 0:
				bad("gateways[%d]: registryServiceName %q is not a DNS name", i, gw.RegistryServiceName)
			case gw.Address != "" && !isIP(gw.Address) && len(validation.IsDNS1123Subdomain(gw.Address)) > 0:
				bad("gateways[%d]: address %q is neither an IP address nor a DNS name", i, gw.Address)
			}
			if gw.Port == 0 || gw.Port > 65535 {
				bad("gateways[%d]: port %d is not in 1-65535", i, gw.Port)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("mesh networks: %w", errors.Join(errs...))
	}
	return nil
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
