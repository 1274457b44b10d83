// Package cow provides Map, a persistent map: a value that never changes
// once built, and Edit, which builds the next version from it copying only
// what it touches.
//
// The proxy view publishes one immutable snapshot per generation, and a
// generation usually changes a few of thousands of services. A Map splits
// its entries by hash over a two-level trie of small maps; the next
// version shares every node and leaf the edit did not touch, so building
// it costs the paths touched (a root, a node and a leaf each, a small
// fraction of the map) rather than the whole map.
package cow
