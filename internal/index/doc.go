// Package index holds the indexes a registry's state is kept in: services
// by key and by hostname, workloads by key and by address, diagnostics by
// owner, endpoints by address, and the check that keeps an endpoint list
// that is in order without sorting it again. The store (internal/store)
// of each registry and of the aggregate is built of them. AddTo and
// RemoveFrom keep the maps of sets the registries hold beside them.
//
// An index holds no lock. Its owner guards it with its own: the read
// methods need that lock held at least shared, the write methods held
// exclusively. Sorted views (Sorted) are built on the first read after a
// change, under the shared lock, and kept until the next write; Cached
// reads a view built before without the lock.
//
// Indexes hold the model values they are given, never copies: a write
// takes ownership of its values, and what a read returns must not be
// modified.
package index
