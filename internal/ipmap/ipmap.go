package ipmap

import (
	"encoding/binary"
	"net/netip"
)

// Map maps IP addresses to values. The zero value is an empty map ready
// to use. It is not safe for concurrent use.
type Map[V any] struct {
	v4 map[uint32]V
	v6 map[[16]byte]V
}

// Get returns the value of ip, or the zero value.
func (m *Map[V]) Get(ip netip.Addr) V {
	if ip.Is4() {
		return m.v4[v4key(ip)]
	}
	return m.v6[ip.As16()]
}

// Lookup returns the value of ip and whether it is present.
func (m *Map[V]) Lookup(ip netip.Addr) (V, bool) {
	var v V
	var ok bool
	if ip.Is4() {
		v, ok = m.v4[v4key(ip)]
	} else {
		v, ok = m.v6[ip.As16()]
	}
	return v, ok
}

// Set sets the value of ip.
func (m *Map[V]) Set(ip netip.Addr, v V) {
	if ip.Is4() {
		if m.v4 == nil {
			m.v4 = map[uint32]V{}
		}
		m.v4[v4key(ip)] = v
	} else {
		if m.v6 == nil {
			m.v6 = map[[16]byte]V{}
		}
		m.v6[ip.As16()] = v
	}
}

// Delete removes ip, if present.
func (m *Map[V]) Delete(ip netip.Addr) {
	if ip.Is4() {
		delete(m.v4, v4key(ip))
	} else {
		delete(m.v6, ip.As16())
	}
}

// Reserve makes an empty map ready for about n IPv4 addresses, so that
// filling it does not grow it step by step. On a map that holds any
// address it does nothing.
func (m *Map[V]) Reserve(n int) {
	if m.Len() == 0 && n > 0 {
		m.v4 = make(map[uint32]V, n)
	}
}

// Len returns the number of addresses in the map.
func (m *Map[V]) Len() int { return len(m.v4) + len(m.v6) }

func v4key(ip netip.Addr) uint32 {
	b := ip.As4()
	return binary.BigEndian.Uint32(b[:])
}
