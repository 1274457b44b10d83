package intern

import (
	"hash/maphash"
	"maps"
	"runtime"
	"sync"
	"weak"
)

// Labels is one shared label map. A holder keeps the *Labels for as long
// as it reads M: the Maps keeps no strong reference.
type Labels struct {
	M map[string]string
}

// Maps interns label maps. The zero value is not ready; use NewMaps. It is
// safe for concurrent use.
type Maps struct {
	seed maphash.Seed

	mu     sync.Mutex
	byHash map[uint64][]weak.Pointer[Labels]
}

// NewMaps returns an empty Maps.
func NewMaps() *Maps {
	return &Maps{seed: maphash.MakeSeed(), byHash: map[uint64][]weak.Pointer[Labels]{}}
}

// Labels returns the Labels whose map equals m: one handed out before and
// still held, else a new one that takes m as its map. An empty m yields
// nil, which a holder reads as no labels.
func (x *Maps) Labels(m map[string]string) *Labels {
	if len(m) == 0 {
		return nil
	}
	h := x.hash(m)
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.byHash[h] {
		if l := p.Value(); l != nil && maps.Equal(l.M, m) {
			return l
		}
	}
	l := &Labels{M: m}
	x.byHash[h] = append(x.byHash[h], weak.Make(l))
	runtime.AddCleanup(l, x.prune, h)
	return l
}

// Len returns the number of maps held by someone, for tests.
func (x *Maps) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, ps := range x.byHash {
		for _, p := range ps {
			if p.Value() != nil {
				n++
			}
		}
	}
	return n
}

// prune drops the entries of a hash whose maps nobody holds any more. It
// runs once a Labels of that hash has been collected.
func (x *Maps) prune(h uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	live := x.byHash[h][:0]
	for _, p := range x.byHash[h] {
		if p.Value() != nil {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		delete(x.byHash, h)
		return
	}
	clear(x.byHash[h][len(live):])
	x.byHash[h] = live
}

func (x *Maps) hash(m map[string]string) uint64 { return Hash(x.seed, m) }

// Hash hashes a map independently of its order: a sum of one hash per
// entry, each mixing its key and value so that swapped values hash apart.
func Hash(seed maphash.Seed, m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		sum += maphash.String(seed, k)*0x9e3779b97f4a7c15 ^ maphash.String(seed, v)
	}
	return sum
}
