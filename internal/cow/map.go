package cow

import (
	"hash/maphash"
	"iter"
)

// shardBits sets the number of shards: 256. With ten thousand entries a
// shard holds about forty, so an edit of one entry copies about forty.
const (
	shardBits = 8
	numShards = 1 << shardBits
)

// Map is a persistent map from K to V. The zero value is an empty map.
// A Map is immutable: reads are safe for concurrent use, and Edit leaves
// the receiver as it was.
type Map[K comparable, V any] struct {
	root *root[K, V]
}

type root[K comparable, V any] struct {
	seed   maphash.Seed
	shards [numShards]map[K]V
	len    int
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
	v, ok := m.root.shards[m.root.shard(k)][k]
	return v, ok
}

// All visits every entry, in no particular order.
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root == nil {
			return
		}
		for _, s := range m.root.shards {
			for k, v := range s {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

func (r *root[K, V]) shard(k K) int {
	return int(maphash.Comparable(r.seed, k) >> (64 - shardBits))
}

// Edit returns an editor whose changes build a new Map from m.
func (m Map[K, V]) Edit() *Editor[K, V] {
	e := &Editor[K, V]{}
	if m.root == nil {
		e.root = &root[K, V]{seed: maphash.MakeSeed()}
	} else {
		r := *m.root // shares every shard until one is written
		e.root = &r
	}
	return e
}

// Editor collects the changes to a Map. It is not safe for concurrent
// use; Done hands its result over and ends it.
type Editor[K comparable, V any] struct {
	root  *root[K, V]
	owned [numShards]bool
}

// Get returns the value for k as edited so far.
func (e *Editor[K, V]) Get(k K) (V, bool) {
	v, ok := e.root.shards[e.root.shard(k)][k]
	return v, ok
}

// Set makes v the value for k.
func (e *Editor[K, V]) Set(k K, v V) {
	s := e.writable(e.root.shard(k))
	if _, ok := s[k]; !ok {
		e.root.len++
	}
	s[k] = v
}

// Delete removes k, if present.
func (e *Editor[K, V]) Delete(k K) {
	i := e.root.shard(k)
	if _, ok := e.root.shards[i][k]; !ok {
		return
	}
	delete(e.writable(i), k)
	e.root.len--
}

// writable returns shard i, copied first if it is shared.
func (e *Editor[K, V]) writable(i int) map[K]V {
	if !e.owned[i] {
		old := e.root.shards[i]
		s := make(map[K]V, len(old)+1)
		for k, v := range old {
			s[k] = v
		}
		e.root.shards[i] = s
		e.owned[i] = true
	}
	return e.root.shards[i]
}

// Done returns the edited Map. The editor must not be used afterwards.
func (e *Editor[K, V]) Done() Map[K, V] {
	m := Map[K, V]{root: e.root}
	e.root = nil
	return m
}
