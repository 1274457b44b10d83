package index

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// FuzzSortedAfter checks sortedAfter against slices.IsSortedFunc on
// lists made from a sorted list by the edits a registry makes and some it
// does not: endpoints removed, new ones inserted anywhere, kept ones
// moved, repeated or swapped. Each byte pair of the input is one edit;
// the seeds run as a table in every go test.
func FuzzSortedAfter(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{0, 3},             // one removed
		{1, 3, 1, 200},     // one inserted, wherever 200 lands
		{0, 1, 0, 1, 0, 1}, // a run removed: beyond the match window
		{2, 4},             // two swapped
		{3, 5},             // one repeated
		{1, 0, 1, 255},     // new ones at both ends
		{4, 2},             // one replaced by an equal new one
		{0, 9, 2, 1, 1, 7, 3, 0},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, edits []byte) {
		if len(edits) > 64 {
			return
		}
		// prev: 12 endpoints at even addresses, two ports each, sorted.
		var prev []*model.Endpoint
		for _, port := range []string{"grpc", "http"} {
			for i := range 12 {
				prev = append(prev, &model.Endpoint{
					ServicePortName: port, Cluster: "c1", Port: 80,
					Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 0, 0, byte(2 * i)})},
				})
			}
		}
		if !slices.IsSortedFunc(prev, model.CompareEndpoints) {
			t.Fatal("the test's prev is not sorted")
		}
		eps := slices.Clone(prev)
		for i := 0; i+1 < len(edits); i += 2 {
			if len(eps) == 0 {
				break
			}
			at := int(edits[i+1]) % len(eps)
			switch edits[i] % 5 {
			case 0:
				eps = slices.Delete(eps, at, at+1)
			case 1:
				// A new endpoint, between or at existing addresses.
				ep := &model.Endpoint{
					ServicePortName: []string{"grpc", "http"}[edits[i+1]%2], Cluster: "c1", Port: 80,
					Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 0, 0, edits[i+1] / 8})},
				}
				eps = slices.Insert(eps, at, ep)
			case 2:
				j := (at + 1) % len(eps)
				eps[at], eps[j] = eps[j], eps[at]
			case 3:
				eps = slices.Insert(eps, at, eps[at])
			case 4:
				ep := *eps[at]
				eps[at] = &ep
			}
		}
		want := slices.IsSortedFunc(eps, model.CompareEndpoints)
		if got := sortedAfter(prev, eps); got != want {
			t.Errorf("sortedAfter = %v, slices.IsSortedFunc = %v, after edits %v", got, want, edits)
		}
	})
}
