package intern

import (
	"hash/maphash"
	"maps"
	"slices"
)

// Counted shares equal label maps among holders that say when they let go:
// each Hold is matched by one Release, and a map is forgotten at its last
// Release. It suits an owner that sees every holder come and go (a
// registry's worker, which sees every delete); Maps suits one that does
// not (an informer's transform). The zero value is not ready; use
// NewCounted. It is not safe for concurrent use.
type Counted struct {
	seed   maphash.Seed
	byHash map[uint64][]*held
}

// held is one shared map and how many holders hold it.
type held struct {
	m       map[string]string
	holders int
}

// NewCounted returns an empty Counted.
func NewCounted() *Counted {
	return &Counted{seed: maphash.MakeSeed(), byHash: map[uint64][]*held{}}
}

// Hold returns the shared map equal to m, else m, which is shared from
// then on and must not be written; either way with one holder more. An
// empty m is returned as it is, not counted.
func (x *Counted) Hold(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	h := Hash(x.seed, m)
	for _, l := range x.byHash[h] {
		if maps.Equal(l.m, m) {
			l.holders++
			return l.m
		}
	}
	x.byHash[h] = append(x.byHash[h], &held{m: m, holders: 1})
	return m
}

// Release drops a holder of a map Hold returned, and forgets the map when
// that was the last.
func (x *Counted) Release(m map[string]string) {
	if len(m) == 0 {
		return
	}
	h := Hash(x.seed, m)
	ls := x.byHash[h]
	i := slices.IndexFunc(ls, func(l *held) bool { return maps.Equal(l.m, m) })
	if i < 0 {
		return
	}
	if ls[i].holders--; ls[i].holders > 0 {
		return
	}
	if ls = slices.Delete(ls, i, i+1); len(ls) == 0 {
		delete(x.byHash, h)
	} else {
		x.byHash[h] = ls
	}
}

// Len returns the number of maps held.
func (x *Counted) Len() int {
	n := 0
	for _, ls := range x.byHash {
		n += len(ls)
	}
	return n
}
