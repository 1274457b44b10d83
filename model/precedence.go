package model

import "cmp"

// compareProviders orders providers by precedence, the winner first: a
// Kubernetes Service wins over a ServiceEntry (ARCHITECTURE.md decision
// 1). The Provider constants are numbered in that order.
func compareProviders(a, b Provider) int { return cmp.Compare(a, b) }
