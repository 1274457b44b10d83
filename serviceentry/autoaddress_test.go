package serviceentry

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/meshreg/meshreg/model"
)

func keysN(n int) []model.ServiceKey {
	out := make([]model.ServiceKey, n)
	for i := range out {
		out[i] = model.ServiceKey{Namespace: fmt.Sprintf("ns%d", i%7), Hostname: model.Hostname(fmt.Sprintf("h%d.example.com", i))}
	}
	return out
}

func TestSlotAddrs(t *testing.T) {
	got := slotAddrs(0x1a2b)
	if got[0] != netip.MustParseAddr("240.240.26.43") || got[1] != netip.MustParseAddr("2001:2::f0f0:1a2b") {
		t.Errorf("slotAddrs = %v", got)
	}
	if slotUsable(0x0100) || slotUsable(0x01ff) || !slotUsable(0x0101) {
		t.Error("x.x.x.0 and x.x.x.255 are not usable")
	}
	if s, ok := addrSlot(netip.MustParseAddr("240.240.26.43")); !ok || s != 0x1a2b {
		t.Errorf("addrSlot = %x %v", s, ok)
	}
	if _, ok := addrSlot(netip.MustParseAddr("10.0.0.1")); ok {
		t.Error("10.0.0.1 is not in the pool")
	}
}

// greedy is the allocation the allocator must keep: keys with status
// addresses pin their slots; the others, in priority order, take the
// first usable free slot from their hash upwards.
func greedy(space int, wants map[model.ServiceKey]vipWant) map[model.ServiceKey]uint16 {
	taken := map[uint16]bool{}
	var free []model.ServiceKey
	for k, w := range wants {
		if len(w.status) == 0 {
			free = append(free, k)
			continue
		}
		for _, a := range w.status {
			if s, ok := addrSlot(a); ok {
				taken[s] = true
				break
			}
		}
	}
	slices.SortFunc(free, func(x, y model.ServiceKey) int { return comparePriority(x, wants[x], y, wants[y]) })
	out := map[model.ServiceKey]uint16{}
	for _, k := range free {
		start := int(hashSlot(k) % uint32(space))
		for i := range space {
			s := uint16((start + i) % space)
			if slotUsable(s) && !taken[s] {
				taken[s], out[k] = true, s
				break
			}
		}
	}
	return out
}

// vipsOf returns every key's VIPs ("" for a key left without).
func vipsOf(a *vipAllocator, keys []model.ServiceKey) map[model.ServiceKey]string {
	out := map[model.ServiceKey]string{}
	for _, k := range keys {
		if v, _ := a.lookup(k); len(v) > 0 {
			out[k] = fmt.Sprint(v)
		} else if a.keys[k] != nil {
			out[k] = ""
		}
	}
	return out
}

// checkGreedy fails unless a holds exactly the greedy allocation of
// wants, and no two keys share a VIP.
func checkGreedy(t *testing.T, a *vipAllocator, wants map[model.ServiceKey]vipWant, step string) {
	t.Helper()
	want := greedy(a.space, wants)
	for k, w := range wants {
		got, exhausted := a.lookup(k)
		switch {
		case len(w.status) > 0:
			if !slices.Equal(got, w.status) {
				t.Fatalf("%s: %v: VIPs %v, want its status %v", step, k, got, w.status)
			}
		case exhausted:
			if s, ok := want[k]; ok {
				t.Fatalf("%s: %v: none left, want slot %x", step, k, s)
			}
		default:
			if s, ok := want[k]; !ok || !slices.Equal(got, slotAddrs(s)) {
				t.Fatalf("%s: %v: VIPs %v, want slot %x (%v)", step, k, got, s, ok)
			}
		}
	}
	if len(a.keys) != len(wants) {
		t.Fatalf("%s: allocator holds %d keys, want %d", step, len(a.keys), len(wants))
	}
	if len(a.bySlot) != len(want) {
		t.Fatalf("%s: %d slots taken, want %d", step, len(a.bySlot), len(want))
	}
}

// Random changes (keys added, removed, made older or newer, given status
// addresses or losing them) in a pool small enough to collide and run
// out: after each, the allocation is the one computed from the keys alone.
func TestAllocatorKeepsGreedyAllocation(t *testing.T) {
	for _, space := range []int{16, 64, 1 << 16} {
		t.Run(fmt.Sprint(space), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(space), 7))
			keys := keysN(80)
			base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			a := newVIPAllocator()
			a.space = space
			wants := map[model.ServiceKey]vipWant{}
			for step := range 3000 {
				k := keys[r.IntN(len(keys))]
				var w *vipWant
				switch r.IntN(5) {
				case 0: // removed
				case 1: // pinned by a status address, in the pool or not
					addr := slotAddrs(uint16(r.IntN(space)))[0]
					if r.IntN(3) == 0 {
						addr = netip.MustParseAddr("10.0.0.1")
					}
					w = &vipWant{created: base.Add(time.Duration(r.IntN(20)) * time.Hour), status: []netip.Addr{addr}}
				default:
					w = &vipWant{created: base.Add(time.Duration(r.IntN(20)) * time.Hour)}
				}
				a.set(k, w)
				if w == nil {
					delete(wants, k)
				} else {
					wants[k] = *w
				}
				checkGreedy(t, a, wants, fmt.Sprintf("step %d", step))
			}
		})
	}
}

// The same keys get the same VIPs whatever order they arrive in, and
// whatever came and went before: what two replicas see.
func TestAllocationIndependentOfOrder(t *testing.T) {
	keys := keysN(300)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	wants := map[model.ServiceKey]vipWant{}
	for i, k := range keys {
		wants[k] = vipWant{created: base.Add(time.Duration(i%13) * time.Minute)}
	}
	var ref map[model.ServiceKey]string
	for run := range 6 {
		r := rand.New(rand.NewPCG(uint64(run), 1))
		a := newVIPAllocator()
		a.space = 512 // crowded: many collisions
		order := slices.Clone(keys)
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for i, k := range order {
			w := wants[k]
			a.set(k, &w)
			if i%5 == 0 { // a key that comes and goes on the way
				gone := order[r.IntN(i+1)]
				a.set(gone, nil)
				gw := wants[gone]
				a.set(gone, &gw)
			}
		}
		got := vipsOf(a, keys)
		if ref == nil {
			ref = got
			continue
		}
		for _, k := range keys {
			if got[k] != ref[k] {
				t.Fatalf("run %d: %v has %q, another order gave %q", run, k, got[k], ref[k])
			}
		}
	}
	if seen := map[string]bool{}; len(ref) != len(keys) {
		t.Fatalf("%d of %d keys allocated", len(ref), len(keys))
	} else {
		for _, v := range ref {
			if seen[v] {
				t.Fatalf("VIPs %s shared", v)
			}
			seen[v] = true
		}
	}
}

// An older key takes its preferred slot from a newer one, which moves on;
// a newer key never displaces an older one; the newest go without when
// the pool runs out, and get a slot when one frees.
func TestAllocatorPriority(t *testing.T) {
	a := newVIPAllocator()
	a.space = 4 // slots 1, 2, 3 usable
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	keys := keysN(5)
	for i := len(keys) - 1; i >= 0; i-- { // newest first
		a.set(keys[i], &vipWant{created: base.Add(time.Duration(i) * time.Hour)})
	}
	for i, k := range keys {
		_, exhausted := a.lookup(k)
		if exhausted != (i >= 3) {
			t.Errorf("key %d (age rank %d): exhausted = %v", i, i, exhausted)
		}
	}
	moved := a.takeMoved()
	a.set(keys[1], nil)
	if _, exhausted := a.lookup(keys[3]); exhausted {
		t.Error("the oldest waiting key did not get the freed slot")
	}
	if _, exhausted := a.lookup(keys[4]); !exhausted {
		t.Error("the newest key got a slot")
	}
	if m := a.takeMoved(); !m[keys[3]] || !m[keys[1]] {
		t.Errorf("moved = %v (before: %v)", slices.Collect(maps.Keys(m)), len(moved))
	}
	// A status address in the pool takes its slot from whoever holds it.
	held, _ := a.lookup(keys[0])
	a.set(keys[4], &vipWant{created: base.Add(9 * time.Hour), status: []netip.Addr{held[0]}})
	if got, _ := a.lookup(keys[4]); !slices.Equal(got, []netip.Addr{held[0]}) {
		t.Errorf("status VIPs = %v", got)
	}
	if got, _ := a.lookup(keys[0]); slices.Equal(got, held) {
		t.Errorf("key 0 kept the slot a status address holds: %v", got)
	}
}

func TestWantsAutoAddress(t *testing.T) {
	for _, tc := range []struct {
		svc  model.Service
		want bool
	}{
		{model.Service{Hostname: "a.com", Resolution: model.DNS}, true},
		{model.Service{Hostname: "a.com", Resolution: model.ClientSideLB}, true},
		{model.Service{Hostname: "a.com", Resolution: model.Passthrough}, false},
		{model.Service{Hostname: "*.a.com", Resolution: model.DNS}, false},
		{model.Service{Hostname: "*.a.com", Resolution: model.DynamicDNS}, false},
		{model.Service{Hostname: "a.com", Resolution: model.DNS, Addresses: map[model.ClusterID][]netip.Prefix{"c": {netip.MustParsePrefix("1.1.1.1/32")}}}, false},
	} {
		if got := wantsAutoAddress(&tc.svc); got != tc.want {
			t.Errorf("%v %v: got %v", tc.svc.Hostname, tc.svc.Resolution, got)
		}
	}
}
