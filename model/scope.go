package model

// ServiceScope is one of Istio's mesh config serviceScopeConfigs: the
// Kubernetes Services its selectors select are global (reachable from
// every cluster, across networks, in ambient mode's multicluster) when
// Global is set. A Service is global when a Global scope selects it;
// other scopes change nothing.
type ServiceScope struct {
	// NamespaceSelector selects the namespaces (by their labels in the
	// Service's cluster) and ServiceSelector the Services (by their
	// labels) the scope applies to; nil selects every one.
	NamespaceSelector, ServiceSelector *LabelSelector
	// Global says the scope is GLOBAL; false is LOCAL.
	Global bool
}

// Selects reports whether the scope applies to a Service with the given
// labels in a namespace with the given labels.
func (s ServiceScope) Selects(namespaceLabels, serviceLabels map[string]string) bool {
	return (s.NamespaceSelector == nil || s.NamespaceSelector.Matches(namespaceLabels)) &&
		(s.ServiceSelector == nil || s.ServiceSelector.Matches(serviceLabels))
}
