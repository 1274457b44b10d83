package store

import (
	"encoding/binary"
	"net/netip"
)

// ipMap maps IP addresses to values. IPv4 addresses, nearly all of them
// in practice, are keyed by their 32-bit number: a netip.Addr key is 24
// bytes (it carries a zone handle) and hashes as variable-length memory,
// where a uint32 key takes the map's fast path and packs 6x more keys per
// cache line. Lookups of the index are bound by memory latency, so this
// is what makes them fast on a large index. Addresses are expected
// unmapped and without zone, as the registries publish them.
type ipMap[V any] struct {
	v4 map[uint32]V
	v6 map[[16]byte]V
}

func newIPMap[V any]() ipMap[V] {
	return ipMap[V]{v4: map[uint32]V{}, v6: map[[16]byte]V{}}
}

func (m *ipMap[V]) get(ip netip.Addr) V {
	if ip.Is4() {
		return m.v4[v4key(ip)]
	}
	return m.v6[ip.As16()]
}

func (m *ipMap[V]) set(ip netip.Addr, v V) {
	if ip.Is4() {
		m.v4[v4key(ip)] = v
	} else {
		m.v6[ip.As16()] = v
	}
}

func (m *ipMap[V]) delete(ip netip.Addr) {
	if ip.Is4() {
		delete(m.v4, v4key(ip))
	} else {
		delete(m.v6, ip.As16())
	}
}

func v4key(ip netip.Addr) uint32 {
	b := ip.As4()
	return binary.BigEndian.Uint32(b[:])
}
