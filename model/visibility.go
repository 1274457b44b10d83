package model

// Visibility is who may see a ServiceEntry's services, as a mesh's
// serviceEntryVisibility resolves it from the entry's namespace: Public
// (the zero value: as its exportTo says), Namespace (its own namespace
// only) or None (no one: it configures no proxy).
type Visibility uint8

// Visibilities.
const (
	VisibilityPublic Visibility = iota
	VisibilityNamespace
	VisibilityNone
)

// String returns "Public", "Namespace" or "None".
func (v Visibility) String() string {
	switch v {
	case VisibilityNamespace:
		return "Namespace"
	case VisibilityNone:
		return "None"
	}
	return "Public"
}

// ServiceEntryVisibility is Istio's mesh config serviceEntryVisibility:
// the visibility of each ServiceEntry, by the labels of its namespace.
type ServiceEntryVisibility struct {
	// Default is the visibility when no policy matches.
	Default Visibility
	// Policies are tried in order; the first whose rules all match the
	// namespace's labels gives the visibility.
	Policies []VisibilityPolicy
	// ApplyToSidecars says sidecars honour it too (their exportTo is
	// capped by it); else only ambient mode's index does.
	ApplyToSidecars bool
}

// VisibilityPolicy is one policy of ServiceEntryVisibility: every rule
// must select the namespace. A policy without rules matches every
// namespace; a nil rule (one Istio cannot read) none.
type VisibilityPolicy struct {
	Visibility Visibility
	Rules      []*LabelSelector
}

// For returns the visibility of a ServiceEntry of a namespace with the
// given labels. A nil ServiceEntryVisibility makes every entry Public.
func (v *ServiceEntryVisibility) For(namespaceLabels map[string]string) Visibility {
	if v == nil {
		return VisibilityPublic
	}
	for _, p := range v.Policies {
		matches := true
		for _, r := range p.Rules {
			if !r.Matches(namespaceLabels) {
				matches = false
				break
			}
		}
		if matches {
			return p.Visibility
		}
	}
	return v.Default
}
