package model

// DefaultTrustDomain is the trust domain of SPIFFE identities when none is
// configured.
const DefaultTrustDomain = "cluster.local"

// DefaultDomainSuffix is the DNS suffix of Kubernetes service hostnames
// when none is configured.
const DefaultDomainSuffix = "cluster.local"

// SpiffeIdentity returns the SPIFFE identity of a service account:
// "spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>". It
// returns "" when serviceAccount is empty.
func SpiffeIdentity(trustDomain, namespace, serviceAccount string) string {
	if serviceAccount == "" {
		return ""
	}
	return "spiffe://" + trustDomain + "/ns/" + namespace + "/sa/" + serviceAccount
}

// KubeServiceHostname returns the hostname of a Kubernetes Service:
// "name.namespace.svc.<domainSuffix>".
func KubeServiceHostname(name, namespace, domainSuffix string) Hostname {
	return Hostname(name + "." + namespace + ".svc." + domainSuffix)
}

// SelectorMatches reports whether a label selector selects an object with
// the given labels: every key of the selector is present with the same
// value. A nil selector selects nothing; an empty, non-nil one selects
// everything.
func SelectorMatches(selector, labels map[string]string) bool {
	if selector == nil {
		return false
	}
	for k, v := range selector {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}
