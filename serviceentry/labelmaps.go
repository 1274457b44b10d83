package serviceentry

import (
	"hash/maphash"
	"maps"
	"slices"
)

// labelMaps shares equal label maps among the instances of the
// WorkloadEntries: the entries of one workload (a group of VMs) carry the
// same labels, and a map of its own per entry would hold them once per
// entry. It counts the instances that hold each map and forgets a map
// once none does. Only the controller's worker uses it; the maps it hands
// out are shared and never written.
type labelMaps struct {
	seed   maphash.Seed
	byHash map[uint64][]*heldLabels
}

// heldLabels is one shared map and how many instances hold it.
type heldLabels struct {
	m       map[string]string
	holders int
}

func newLabelMaps() *labelMaps {
	return &labelMaps{seed: maphash.MakeSeed(), byHash: map[uint64][]*heldLabels{}}
}

// hash returns the hash of a map's pairs, whatever their order.
func (x *labelMaps) hash(m map[string]string) uint64 {
	var h uint64
	for k, v := range m {
		h += maphash.Comparable(x.seed, labelPair{k, v})
	}
	return h
}

// hold returns the shared map equal to m, else m, which is shared from
// then on and must not be written; either way one holder more. An empty
// m is returned as it is, not counted.
func (x *labelMaps) hold(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	h := x.hash(m)
	for _, l := range x.byHash[h] {
		if maps.Equal(l.m, m) {
			l.holders++
			return l.m
		}
	}
	x.byHash[h] = append(x.byHash[h], &heldLabels{m: m, holders: 1})
	return m
}

// release drops a holder of a map hold returned, and forgets the map when
// that was the last.
func (x *labelMaps) release(m map[string]string) {
	if len(m) == 0 {
		return
	}
	h := x.hash(m)
	ls := x.byHash[h]
	i := slices.IndexFunc(ls, func(l *heldLabels) bool { return maps.Equal(l.m, m) })
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
