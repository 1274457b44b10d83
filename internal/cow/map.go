package cow

import (
	"hash/maphash"
	"iter"
)

// A Map is a two-level trie of small Go maps: a root of fan nodes, each
// of fan leaves, chosen by the top bits of the key's hash. An edit of
// one entry copies the root, one node and one leaf; with a hundred
// thousand entries a leaf holds about twenty-five.
const (
	fanBits = 6
	fan     = 1 << fanBits
)

// Map is a persistent map from K to V. The zero value is an empty map.
// A Map is immutable: reads are safe for concurrent use, and Edit leaves
// the receiver as it was.
type Map[K comparable, V any] struct {
	root *root[K, V]
}

type root[K comparable, V any] struct {
	seed  maphash.Seed
	len   int
	nodes [fan]*node[K, V]
}

// node is one level of the trie. owner is the editor that made it, the
// only one that may write it; fresh has bit j set when leaves[j] was
// made by owner too (else it is shared with earlier versions).
type node[K comparable, V any] struct {
	owner  *Editor[K, V]
	fresh  uint64
	leaves [fan]map[K]V
}

// Len returns the number of entries.
func (m Map[K, V]) Len() int {
	if m.root == nil {
		return 0
	}
	return m.root.len
}

// Get returns the value for k and whether it is present.
func (m Map[K, V]) Get(k K) (V, bool) {
	if m.root == nil {
		var zero V
		return zero, false
	}
	return m.root.get(k)
}

func (r *root[K, V]) get(k K) (V, bool) {
	i, j := r.place(k)
	n := r.nodes[i]
	if n == nil {
		var zero V
		return zero, false
	}
	v, ok := n.leaves[j][k]
	return v, ok
}

// All visits every entry, in no particular order.
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root == nil {
			return
		}
		for _, n := range m.root.nodes {
			if n == nil {
				continue
			}
			for _, leaf := range n.leaves {
				for k, v := range leaf {
					if !yield(k, v) {
						return
					}
				}
			}
		}
	}
}

// place returns the node and the leaf of k: the top two groups of
// fanBits of its hash.
func (r *root[K, V]) place(k K) (node, leaf int) {
	h := maphash.Comparable(r.seed, k)
	return int(h >> (64 - fanBits)), int(h>>(64-2*fanBits)) & (fan - 1)
}

// Edit returns an editor whose changes build a new Map from m.
func (m Map[K, V]) Edit() *Editor[K, V] {
	e := &Editor[K, V]{}
	if m.root == nil {
		e.root = &root[K, V]{seed: maphash.MakeSeed()}
	} else {
		r := *m.root // shares every node until one is written
		e.root = &r
	}
	return e
}

// Editor collects the changes to a Map. It is not safe for concurrent
// use; Done hands its result over and ends it.
type Editor[K comparable, V any] struct {
	root *root[K, V]
}

// Get returns the value for k as edited so far.
func (e *Editor[K, V]) Get(k K) (V, bool) { return e.root.get(k) }

// Set makes v the value for k.
func (e *Editor[K, V]) Set(k K, v V) {
	s := e.writable(e.root.place(k))
	if _, ok := s[k]; !ok {
		e.root.len++
	}
	s[k] = v
}

// Delete removes k, if present.
func (e *Editor[K, V]) Delete(k K) {
	i, j := e.root.place(k)
	n := e.root.nodes[i]
	if n == nil {
		return
	}
	if _, ok := n.leaves[j][k]; !ok {
		return
	}
	delete(e.writable(i, j), k)
	e.root.len--
}

// writable returns leaf j of node i, copying first the node and the leaf
// that this editor did not make.
func (e *Editor[K, V]) writable(i, j int) map[K]V {
	n := e.root.nodes[i]
	switch {
	case n == nil:
		n = &node[K, V]{owner: e}
		e.root.nodes[i] = n
	case n.owner != e:
		c := *n
		c.owner, c.fresh = e, 0
		n = &c
		e.root.nodes[i] = n
	}
	if n.fresh&(1<<j) == 0 {
		old := n.leaves[j]
		leaf := make(map[K]V, len(old)+1)
		for k, v := range old {
			leaf[k] = v
		}
		n.leaves[j] = leaf
		n.fresh |= 1 << j
	}
	return n.leaves[j]
}

// Done returns the edited Map. The editor must not be used afterwards.
func (e *Editor[K, V]) Done() Map[K, V] {
	m := Map[K, V]{root: e.root}
	e.root = nil
	return m
}
