package model

import "cmp"

// ComparePrecedence orders services that claim one hostname, the service
// that wins first (ARCHITECTURE.md decision 1): a Kubernetes Service
// before a ServiceEntry, then the oldest, then by namespace and name. It
// is the one rule for which service a hostname names: registries answer
// registry.Discovery.GetService with the first in this order, the
// aggregate merges the versions of one service key with the winning
// provider's (and takes no endpoints from the others), and the
// serviceentry registry gives a key to the oldest of the entries that
// declare it.
func ComparePrecedence(a, b *Service) int {
	if c := compareProviders(a.Provider, b.Provider); c != 0 {
		return c
	}
	if c := a.CreationTime.Compare(b.CreationTime); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// compareProviders orders providers by precedence, the winner first: a
// Kubernetes Service wins over a ServiceEntry. The Provider constants are
// numbered in that order.
func compareProviders(a, b Provider) int { return cmp.Compare(a, b) }
