package index

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// TestReplaceMatchesFreshIndex replaces a service's endpoints many times
// with lists that reuse earlier endpoint values, hold new ones, and hold
// endpoints that compare equal (same port and address, other fields
// differing), some of them dual-stack, and checks after each step that
// the index holds exactly what an index given only the current list
// holds: Replace, which skips endpoints kept by pointer and writes a
// replaced one in its predecessor's place, loses and duplicates nothing.
func TestReplaceMatchesFreshIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	svc := &model.Service{Hostname: "a.ns.svc.cluster.local", Namespace: "ns", Name: "a", Provider: model.Kubernetes,
		Ports: []model.Port{{Name: "http", Port: 80, Protocol: model.HTTP}, {Name: "grpc", Port: 90, Protocol: model.GRPC}}}
	ips := make([]netip.Addr, 5)
	for i := range ips {
		ips[i] = netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)})
	}
	ips = append(ips, netip.MustParseAddr("fd00::1"))
	var pool []*model.Endpoint
	mk := func() *model.Endpoint {
		addrs := []netip.Addr{ips[r.IntN(len(ips)-1)]}
		if r.IntN(4) == 0 {
			addrs = append(addrs, ips[len(ips)-1]) // dual-stack
		}
		ep := &model.Endpoint{
			Addresses:       addrs,
			Port:            uint32(8080 + r.IntN(2)),
			ServicePortName: []string{"http", "grpc"}[r.IntN(2)],
			Cluster:         "c1",
			NodeName:        fmt.Sprint("n", r.IntN(3)), // equal keys, different values
		}
		pool = append(pool, ep)
		return ep
	}
	// snapshot lists each IP's index entries as endpoint identities.
	snapshot := func(x *EndpointsByIP, ids map[*model.Endpoint]int) map[netip.Addr][]int {
		out := map[netip.Addr][]int{}
		for _, ip := range ips {
			for _, ref := range x.m.Get(ip) {
				if ref.owner.Key != svc.Key() {
					t.Fatalf("entry of %v points to owner %v", ip, ref.owner.Key)
				}
				out[ip] = append(out[ip], ids[ref.ep])
			}
			slices.Sort(out[ip])
		}
		return out
	}

	owner := &Owner{Key: svc.Key(), Service: svc}
	var x EndpointsByIP
	var held []*model.Endpoint // the list x indexes
	for step := range 1000 {
		var list []*model.Endpoint
		for range r.IntN(8) {
			if len(pool) > 0 && r.IntN(2) == 0 {
				list = append(list, pool[r.IntN(len(pool))]) // a value published before
			} else {
				list = append(list, mk())
			}
		}
		slices.SortFunc(list, func(a, b *model.Endpoint) int { return cmp.Compare(fmt.Sprintf("%p", a), fmt.Sprintf("%p", b)) })
		list = slices.Compact(list) // each value at most once
		r.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		// As a store does: the list sorted, and an equal one not
		// indexed, the list held staying.
		next := slices.Clone(list)
		SortEndpoints(held, next)
		if !model.EndpointsEqual(held, next) {
			x.Replace(owner, held, next)
			held = next
		}
		var fresh EndpointsByIP
		fresh.Add(owner, held)
		ids := map[*model.Endpoint]int{}
		for i, ep := range pool {
			ids[ep] = i
		}
		if got, want := snapshot(&x, ids), snapshot(&fresh, ids); !maps.EqualFunc(got, want, slices.Equal[[]int]) {
			t.Fatalf("step %d: index %v, want %v", step, got, want)
		}
	}
}
