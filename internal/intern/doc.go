// Package intern shares equal label maps among the objects that hold them.
//
// Pods come in replica sets and WorkloadEntries in groups whose members
// carry the same labels; a registry that keeps one map per member holds
// the same map many times over. Two tables hand out one map per distinct
// set of labels:
//
//   - Maps, for holders that never say when they let go (an informer's
//     transform sees adds and updates, not deletes): it holds its maps
//     weakly and forgets one once nothing holds its *Labels. It is safe
//     for concurrent use.
//   - Counted, for an owner that sees every holder come and go (a
//     registry's worker): Hold and Release count the holders, and the
//     last Release forgets the map. It is for one goroutine.
//
// A map given to either is shared from then on: no map they hand out may
// be written.
package intern
