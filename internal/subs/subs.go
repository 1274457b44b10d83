package subs

import (
	"slices"
	"sync"
)

// Set holds subscribers of type F. The zero value is empty and ready;
// it is safe for concurrent use.
type Set[F any] struct {
	// mu guards next and m.
	mu   sync.Mutex
	next uint64
	m    map[uint64]F
}

// Add adds f and returns the function that removes it; removing twice
// does nothing.
func (s *Set[F]) Add(f F) (remove func()) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[uint64]F{}
	}
	id := s.next
	s.next++
	s.m[id] = f
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.m, id)
		s.mu.Unlock()
	}
}

// All returns the subscribers, in the order they were added: a copy, so
// that the caller calls them without the set's lock.
func (s *Set[F]) All() []F {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]uint64, 0, len(s.m))
	for id := range s.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]F, len(ids))
	for i, id := range ids {
		out[i] = s.m[id]
	}
	return out
}

// Len returns the number of subscribers.
func (s *Set[F]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
