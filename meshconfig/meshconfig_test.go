package meshconfig_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/meshconfig"
	"github.com/meshreg/meshreg/model"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    *meshconfig.Config
		wantErr string
	}{
		{name: "empty", yaml: "", want: &meshconfig.Config{}},
		{name: "fields read and others of Istio's schema", yaml: `
trustDomain: example.org
defaultServiceExportTo: ["."]
serviceScopeConfigs:
- servicesSelector:
    matchExpressions:
    - {key: istio.io/global, operator: In, values: ["true"]}
  scope: GLOBAL
- namespaceSelector: {matchLabels: {team: a}}
  scope: LOCAL
serviceEntryVisibility:
  defaultVisibility: NAMESPACE
  applyToSidecars: true
  policies:
  - visibility: PUBLIC
    matchingRules:
    - namespaceSelector: {matchLabels: {shared: "true"}}
    - namespaceSelector: {}
  - visibility: NONE
  - visibility: NONE
    matchingRules:
    - {}
`, want: &meshconfig.Config{
			TrustDomain: "example.org",
			ServiceScopes: []model.ServiceScope{
				{ServiceSelector: &model.LabelSelector{MatchExpressions: []model.LabelRequirement{{Key: "istio.io/global", Operator: "In", Values: []string{"true"}}}}, Global: true},
				{NamespaceSelector: &model.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
			},
			ServiceEntryVisibility: &model.ServiceEntryVisibility{Default: model.VisibilityNamespace, ApplyToSidecars: true, Policies: []model.VisibilityPolicy{
				{Visibility: model.VisibilityPublic, Rules: []*model.LabelSelector{{MatchLabels: map[string]string{"shared": "true"}}, {}}},
				{Visibility: model.VisibilityNone},
				{Visibility: model.VisibilityNone, Rules: []*model.LabelSelector{nil}}, // a rule without a matcher matches nothing
			}},
		}},
		{name: "a field Istio does not have", yaml: "trustDomains: x", wantErr: "trustDomains"},
		{name: "not YAML", yaml: "a: [", wantErr: "mesh config"},
		{name: "a bad operator", yaml: `
serviceScopeConfigs:
- servicesSelector:
    matchExpressions:
    - {key: k, operator: Near, values: [v]}
  scope: GLOBAL
`, wantErr: "serviceScopeConfigs[0].servicesSelector"},
		{name: "a bad visibility selector", yaml: `
serviceEntryVisibility:
  policies:
  - matchingRules:
    - namespaceSelector: {matchLabels: {"bad key!": v}}
`, wantErr: "policies[0].matchingRules[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := meshconfig.Parse([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The visibility a parsed serviceEntryVisibility gives namespaces.
func TestVisibilityFor(t *testing.T) {
	mc, err := meshconfig.Parse([]byte(`
serviceEntryVisibility:
  defaultVisibility: NAMESPACE
  policies:
  - visibility: PUBLIC
    matchingRules:
    - namespaceSelector: {matchLabels: {shared: "true"}}
    - namespaceSelector: {matchExpressions: [{key: tier, operator: Exists}]}
  - visibility: NONE
    matchingRules:
    - namespaceSelector: {matchLabels: {hidden: "true"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		labels map[string]string
		want   model.Visibility
	}{
		{nil, model.VisibilityNamespace},
		{map[string]string{"shared": "true"}, model.VisibilityNamespace}, // both rules must match
		{map[string]string{"shared": "true", "tier": "x"}, model.VisibilityPublic},
		{map[string]string{"hidden": "true", "shared": "true", "tier": "x"}, model.VisibilityPublic}, // the first policy wins
		{map[string]string{"hidden": "true"}, model.VisibilityNone},
	} {
		if got := mc.ServiceEntryVisibility.For(tc.labels); got != tc.want {
			t.Errorf("labels %v: %v, want %v", tc.labels, got, tc.want)
		}
	}
	var unset *model.ServiceEntryVisibility
	if got := unset.For(map[string]string{"hidden": "true"}); got != model.VisibilityPublic {
		t.Errorf("no serviceEntryVisibility: %v, want Public", got)
	}
}
