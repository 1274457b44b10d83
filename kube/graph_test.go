package kube

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The graph is a function of the slices alone: after any history of
// slices added, changed and removed it names, for each pod and address,
// exactly the slices a fresh graph over the final slices names.
func TestGraphFollowsSlices(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 3))
			randomSlice := func(name string) *sliceInfo {
				var eps []sliceEP
				for range r.IntN(5) {
					i := r.IntN(4)
					e := sliceEP{addr: fmt.Sprintf("10.0.0.%d", i+1), pod: fmt.Sprint("p", i), ready: true}
					if r.IntN(3) == 0 {
						e.pod = ""
					}
					eps = append(eps, e)
				}
				return newSliceInfo(sliceObj("ns", name, "svc", discoveryv1.AddressTypeIPv4, 8080, eps...))
			}
			g := newGraph()
			current := map[types.NamespacedName]*sliceInfo{}
			for range 30 {
				key := types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("s", r.IntN(3))}
				var s *sliceInfo
				if r.IntN(4) != 0 {
					s = randomSlice(key.Name)
				}
				g.replaceSlice(key, current[key], s)
				if s == nil {
					delete(current, key)
				} else {
					current[key] = s
				}
			}
			fresh := newGraph()
			for k, s := range current {
				fresh.replaceSlice(k, nil, s)
			}
			for i := range 4 {
				pod := types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("p", i)}
				addrs := []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", i+1))}
				var got, want []string
				g.slicesOf(pod, addrs, func(s types.NamespacedName) { got = append(got, s.Name) })
				fresh.slicesOf(pod, addrs, func(s types.NamespacedName) { want = append(want, s.Name) })
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("pod %s: slices %v, want %v", pod, got, want)
				}
			}
		})
	}
}
