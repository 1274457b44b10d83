package shards

import (
	"iter"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// Map maps shard keys to values. The zero value is an empty map ready to
// use. A Map is a value holding a slice: copying it shares the entries, so
// keep one owner. It is not safe for concurrent use.
type Map[V any] struct {
	entries []entry[V]
}

type entry[V any] struct {
	key   model.ShardKey
	value V
}

func (m *Map[V]) find(k model.ShardKey) (int, bool) {
	return slices.BinarySearchFunc(m.entries, k, func(e entry[V], k model.ShardKey) int { return e.key.Compare(k) })
}

// Get returns the value of k and whether it is present.
func (m *Map[V]) Get(k model.ShardKey) (V, bool) {
	if i, ok := m.find(k); ok {
		return m.entries[i].value, true
	}
	var zero V
	return zero, false
}

// Has reports whether k is present.
func (m *Map[V]) Has(k model.ShardKey) bool {
	_, ok := m.find(k)
	return ok
}

// Set sets the value of k.
func (m *Map[V]) Set(k model.ShardKey, v V) {
	i, ok := m.find(k)
	if ok {
		m.entries[i].value = v
		return
	}
	m.entries = slices.Insert(m.entries, i, entry[V]{key: k, value: v})
}

// Delete removes k, if present.
func (m *Map[V]) Delete(k model.ShardKey) {
	if i, ok := m.find(k); ok {
		m.entries = slices.Delete(m.entries, i, i+1)
		if len(m.entries) == 0 {
			m.entries = nil
		}
	}
}

// Len returns the number of entries.
func (m *Map[V]) Len() int { return len(m.entries) }

// All visits the entries in shard order (model.ShardKey.Compare). The map must not
// change during the visit.
func (m *Map[V]) All() iter.Seq2[model.ShardKey, V] {
	return func(yield func(model.ShardKey, V) bool) {
		for _, e := range m.entries {
			if !yield(e.key, e.value) {
				return
			}
		}
	}
}

// Keys returns the keys in shard order, in a new slice.
func (m *Map[V]) Keys() []model.ShardKey {
	out := make([]model.ShardKey, len(m.entries))
	for i, e := range m.entries {
		out[i] = e.key
	}
	return out
}
