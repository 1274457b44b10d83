package meshconfig

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	meshv1alpha1 "istio.io/api/mesh/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/model"
)

// Config is what meshreg reads of Istio's mesh config, each field ready
// for the option that takes it.
type Config struct {
	// TrustDomain is trustDomain ("" when unset): kube.Options,
	// serviceentry.Options and address.Options TrustDomain.
	TrustDomain string
	// ServiceScopes are serviceScopeConfigs: address.Options.ServiceScopes.
	ServiceScopes []model.ServiceScope
	// ServiceEntryVisibility is serviceEntryVisibility, nil when unset:
	// serviceentry.Options.Visibility, and its ApplyToSidecars
	// proxyview.Options.ServiceEntryVisibility.
	ServiceEntryVisibility *model.ServiceEntryVisibility
}

// Parse reads Istio's mesh config YAML (or JSON): the value of the istio
// ConfigMap's "mesh" key.
//
//	trustDomain: example.org
//	serviceScopeConfigs:
//	- servicesSelector:
//	    matchExpressions:
//	    - {key: istio.io/global, operator: In, values: ["true"]}
//	  scope: GLOBAL
//	serviceEntryVisibility:
//	  defaultVisibility: NAMESPACE
//	  policies:
//	  - visibility: PUBLIC
//	    matchingRules:
//	    - namespaceSelector: {matchLabels: {shared: "true"}}
//
// Fields meshreg does not read are ignored, as long as Istio's schema
// has them; a field it does not have is an error, and so is a selector
// that is not a valid label selector.
func Parse(data []byte) (*Config, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("mesh config: %w", err)
	}
	var mc meshv1alpha1.MeshConfig
	if string(js) == "null" {
		js = []byte("{}") // an empty document
	}
	if err := protojson.Unmarshal(js, &mc); err != nil {
		return nil, fmt.Errorf("mesh config: %w", err)
	}
	out := &Config{TrustDomain: mc.GetTrustDomain()}
	for i, sc := range mc.GetServiceScopeConfigs() {
		ns, err := selector(sc.GetNamespaceSelector())
		if err != nil {
			return nil, fmt.Errorf("mesh config: serviceScopeConfigs[%d].namespaceSelector: %w", i, err)
		}
		svc, err := selector(sc.GetServicesSelector())
		if err != nil {
			return nil, fmt.Errorf("mesh config: serviceScopeConfigs[%d].servicesSelector: %w", i, err)
		}
		out.ServiceScopes = append(out.ServiceScopes, model.ServiceScope{NamespaceSelector: ns, ServiceSelector: svc,
			Global: sc.GetScope() == meshv1alpha1.MeshConfig_ServiceScopeConfigs_GLOBAL})
	}
	if sev := mc.GetServiceEntryVisibility(); sev != nil {
		v := &model.ServiceEntryVisibility{Default: visibility(sev.GetDefaultVisibility()), ApplyToSidecars: sev.GetApplyToSidecars()}
		for i, p := range sev.GetPolicies() {
			vp := model.VisibilityPolicy{Visibility: visibility(p.GetVisibility())}
			for j, r := range p.GetMatchingRules() {
				var rule *model.LabelSelector // a matcher Istio cannot read matches nothing
				if ns := r.GetNamespaceSelector(); ns != nil {
					if rule, err = selector(ns); err != nil {
						return nil, fmt.Errorf("mesh config: serviceEntryVisibility.policies[%d].matchingRules[%d]: %w", i, j, err)
					}
				}
				vp.Rules = append(vp.Rules, rule)
			}
			v.Policies = append(v.Policies, vp)
		}
		out.ServiceEntryVisibility = v
	}
	return out, nil
}

// visibility maps a mesh config visibility; unspecified is Public.
func visibility(v meshv1alpha1.ServiceEntryVisibility_Visibility) model.Visibility {
	switch v {
	case meshv1alpha1.ServiceEntryVisibility_NAMESPACE:
		return model.VisibilityNamespace
	case meshv1alpha1.ServiceEntryVisibility_NONE:
		return model.VisibilityNone
	}
	return model.VisibilityPublic
}

// selector converts a mesh config label selector; nil stays nil (every
// one, as Istio reads an absent scope selector).
func selector(sel *meshv1alpha1.LabelSelector) (*model.LabelSelector, error) {
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
