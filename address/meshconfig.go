package address

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	meshv1alpha1 "istio.io/api/mesh/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/model"
)

// ParseServiceScopes reads the serviceScopeConfigs of Istio's mesh
// config YAML (or JSON), the value of the istio ConfigMap's "mesh" key,
// for Options.ServiceScopes:
//
//	serviceScopeConfigs:
//	- servicesSelector:
//	    matchExpressions:
//	    - {key: istio.io/global, operator: In, values: ["true"]}
//	  scope: GLOBAL
//
// Other fields of the mesh config are not read. A selector that is not
// a valid label selector is an error naming it.
func ParseServiceScopes(meshConfig []byte) ([]ServiceScope, error) {
	js, err := yaml.YAMLToJSON(meshConfig)
	if err != nil {
		return nil, fmt.Errorf("mesh config: %w", err)
	}
	var mc meshv1alpha1.MeshConfig
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(js, &mc); err != nil {
		return nil, fmt.Errorf("mesh config: %w", err)
	}
	var out []ServiceScope
	for i, sc := range mc.GetServiceScopeConfigs() {
		ns, err := meshSelector(sc.GetNamespaceSelector())
		if err != nil {
			return nil, fmt.Errorf("mesh config: serviceScopeConfigs[%d].namespaceSelector: %w", i, err)
		}
		svc, err := meshSelector(sc.GetServicesSelector())
		if err != nil {
			return nil, fmt.Errorf("mesh config: serviceScopeConfigs[%d].servicesSelector: %w", i, err)
		}
		out = append(out, ServiceScope{NamespaceSelector: ns, ServiceSelector: svc,
			Global: sc.GetScope() == meshv1alpha1.MeshConfig_ServiceScopeConfigs_GLOBAL})
	}
	return out, nil
}

// meshSelector converts a mesh config label selector; nil stays nil
// (every one, as Istio reads an absent selector).
func meshSelector(sel *meshv1alpha1.LabelSelector) (*model.LabelSelector, error) {
	if sel == nil {
		return nil, nil
	}
	k8s := &metav1.LabelSelector{MatchLabels: sel.GetMatchLabels()}
	out := &model.LabelSelector{MatchLabels: sel.GetMatchLabels()}
	for _, r := range sel.GetMatchExpressions() {
		k8s.MatchExpressions = append(k8s.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.GetKey(), Operator: metav1.LabelSelectorOperator(r.GetOperator()), Values: r.GetValues()})
		out.MatchExpressions = append(out.MatchExpressions, model.LabelRequirement{Key: r.GetKey(), Operator: r.GetOperator(), Values: r.GetValues()})
	}
	if _, err := metav1.LabelSelectorAsSelector(k8s); err != nil {
		return nil, err
	}
	return out, nil
}
