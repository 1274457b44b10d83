package ipmap

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMapAgainstBuiltin applies random operations to a Map and to a Go
// map keyed by netip.Addr, over IPv4 and IPv6 addresses whose bytes
// overlap, and compares them after each.
func TestMapAgainstBuiltin(t *testing.T) {
	addrs := []netip.Addr{
		netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("0.0.0.0"),
		netip.MustParseAddr("::a00:1"), netip.MustParseAddr("::ffff:10.0.0.1"), netip.MustParseAddr("fd00::1"),
		netip.MustParseAddr("::"),
	}
	r := rand.New(rand.NewPCG(3, 4))
	var m Map[int]
	ref := map[netip.Addr]int{}
	for step := range 3000 {
		a := addrs[r.IntN(len(addrs))]
		if r.IntN(3) == 0 {
			m.Delete(a)
			delete(ref, a)
		} else {
			m.Set(a, step)
			ref[a] = step
		}
		if m.Len() != len(ref) {
			t.Fatalf("step %d: Len %d, want %d", step, m.Len(), len(ref))
		}
		for _, a := range addrs {
			v, ok := m.Lookup(a)
			want, wantOK := ref[a]
			if v != want || ok != wantOK || m.Get(a) != want {
				t.Fatalf("step %d: %v = %d, %v; want %d, %v", step, a, v, ok, want, wantOK)
			}
		}
	}
}

func TestZeroMap(t *testing.T) {
	var m Map[string]
	if m.Get(netip.MustParseAddr("10.0.0.1")) != "" || m.Len() != 0 {
		t.Error("zero map not empty")
	}
	m.Delete(netip.MustParseAddr("fd00::1")) // no panic on a nil map
}

func BenchmarkGet(b *testing.B) {
	var m Map[int]
	var std = map[netip.Addr]int{}
	ips := make([]netip.Addr, 100000)
	for i := range ips {
		ips[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		m.Set(ips[i], i)
		std[ips[i]] = i
	}
	b.Run("ipmap", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			m.Get(ips[(i*7919)%len(ips)])
		}
	})
	b.Run("netip.Addr map", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = std[ips[(i*7919)%len(ips)]]
		}
	})
}

func TestReserve(t *testing.T) {
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")
	var m Map[int]
	m.Reserve(100)
	m.Set(a, 1)
	m.Set(b, 2)
	m.Reserve(100) // not empty: nothing
	if m.Get(a) != 1 || m.Get(b) != 2 || m.Len() != 2 {
		t.Errorf("after Reserve: %d, %d, len %d; want 1, 2, len 2", m.Get(a), m.Get(b), m.Len())
	}
}
