package serviceentry

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

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
}

// The same set of keys gets the same VIPs whatever order it arrives in,
// and no VIP is shared, even with many hash collisions (2000 keys in a
// small pool force them).
func TestAllocateDeterministicAndCollisionFree(t *testing.T) {
	keys := keysN(2000)
	ref := newVIPAllocator()
	if failed := ref.allocate(keys); failed != nil {
		t.Fatal(failed)
	}
	seen := map[netip.Addr]model.ServiceKey{}
	for _, k := range keys {
		v, _ := ref.lookup(k)
		if other, dup := seen[v[0]]; dup {
			t.Fatalf("%v and %v share %v", k, other, v[0])
		}
		seen[v[0]] = k
		if !netip.MustParsePrefix("240.240.0.0/16").Contains(v[0]) {
			t.Fatalf("%v outside 240.240.0.0/16", v[0])
		}
	}
	for range 5 {
		shuffled := append([]model.ServiceKey(nil), keys...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		a := newVIPAllocator()
		a.allocate(shuffled)
		for _, k := range keys {
			x, _ := a.lookup(k)
			y, _ := ref.lookup(k)
			if x[0] != y[0] {
				t.Fatalf("%v: %v in one order, %v in another", k, x[0], y[0])
			}
		}
	}
}

// A key keeps its VIP while others come and go, and a freed slot is
// reused.
func TestAllocateStable(t *testing.T) {
	keys := keysN(500)
	a := newVIPAllocator()
	a.allocate(keys[:250])
	before := map[model.ServiceKey]netip.Addr{}
	for _, k := range keys[:250] {
		v, _ := a.lookup(k)
		before[k] = v[0]
	}
	for _, k := range keys[:100] {
		a.release(k)
	}
	a.allocate(keys[250:])
	a.allocate(keys[:100])
	for _, k := range keys[100:250] {
		if v, _ := a.lookup(k); v[0] != before[k] {
			t.Fatalf("%v moved from %v to %v", k, before[k], v[0])
		}
	}
	if len(a.byKey) != 500 || len(a.byslot) != 500 {
		t.Fatalf("%d keys, %d slots", len(a.byKey), len(a.byslot))
	}
}

func TestAllocateExhausted(t *testing.T) {
	a := newVIPAllocator()
	a.capacity = 3
	failed := a.allocate(keysN(5))
	if len(failed) != 2 {
		t.Fatalf("failed = %v", failed)
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
		{model.Service{Hostname: "a.com", Resolution: model.DNS, Addresses: map[model.ClusterID][]netip.Prefix{"c": {netip.MustParsePrefix("1.1.1.1/32")}}}, false},
	} {
		if got := wantsAutoAddress(&tc.svc); got != tc.want {
			t.Errorf("%v %v: got %v", tc.svc.Hostname, tc.svc.Resolution, got)
		}
	}
}
