// Package reliability holds the tools of meshreg's reliability tier
// (ARCHITECTURE.md, testing tier 5) and, in its tests, the tier itself:
//
//   - a generator of random histories of Kubernetes and Istio objects over
//     two clusters (Generator, Sequence), and a Checker that applies a
//     history to a running aggregate through sources.ManifestCluster.Apply
//     and compares the aggregate's dump with that of a fresh aggregate
//     built from the final objects alone (ARCHITECTURE.md decision 6: order
//     never matters);
//   - a Harness that builds an aggregate from manifests as registry-dump
//     does, applies worlds to it, and waits until it is quiet (Settle);
//   - tests of fault injection through client-go fake reactors, leaks,
//     a catalogue of bad input, and isolation between namespaces.
//
// The package is internal: its API serves the tests and may change.
//
// # Long mode
//
// The convergence test runs a fixed-seed batch by default. Run it for
// hours with
//
//	go test -race -run TestConvergence -convergence.long=2h ./test/reliability/
//
// or MESHREG_CONVERGENCE_DURATION=2h; a failure prints its seed, which
// replays with -convergence.seed=N.
package reliability
