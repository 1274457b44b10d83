package serviceentry

import (
	"cmp"
	"hash/fnv"
	"net/netip"
	"slices"

	"github.com/meshreg/meshreg/model"
)

// Auto-allocated VIPs.
//
// A ServiceEntry host that declares no addresses (and is neither a
// wildcard nor of resolution NONE) gets a VIP pair: an IPv4 address in
// 240.240.0.0/16 and its IPv6 counterpart 2001:2::f0f0:XXYY, where XX and
// YY are the IPv4's last two bytes in hex. A pair is a slot: the low 16
// bits, skipping those whose last byte is 0 or 255 (65,024 slots).
//
// Each service key (namespace, host) prefers the slot its FNV-1a hash
// names, and probes upwards to the next free slot on a collision, so no
// two keys share a VIP. Keys waiting for a VIP are allocated in sorted
// order; a registry allocates every key at once at its initial sync, so
// the same set of entries yields the same VIPs in any process whatever
// order their events came in. Afterwards a key keeps its VIP for as long
// as it is eligible, and new keys probe around the taken slots. Where the
// two conflict, stability wins: two processes that saw entries come and
// go in different orders agree on every VIP except where probing
// resolved a collision differently.

// labelAutoAllocate opts a ServiceEntry out of auto-allocated VIPs with
// the value "false" (any case).
const labelAutoAllocate = "networking.istio.io/enable-autoallocate-ip"

var (
	autoV4Prefix = [2]byte{240, 240}
	autoV6Prefix = [14]byte{0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0xf0}
)

// wantsAutoAddress reports whether a service gets auto-allocated VIPs.
func wantsAutoAddress(svc *model.Service) bool {
	return len(svc.Addresses) == 0 && !svc.Hostname.IsWildcard() && svc.Resolution != model.Passthrough && svc.Resolution != model.DynamicDNS
}

// slotUsable reports whether a slot's IPv4 is neither an x.x.x.0 nor an
// x.x.x.255 address.
func slotUsable(slot uint16) bool { low := byte(slot); return low != 0 && low != 255 }

// slotAddrs returns the VIP pair of a slot, IPv4 first.
func slotAddrs(slot uint16) []netip.Addr {
	hi, lo := byte(slot>>8), byte(slot)
	v4 := netip.AddrFrom4([4]byte{autoV4Prefix[0], autoV4Prefix[1], hi, lo})
	var b [16]byte
	copy(b[:], autoV6Prefix[:])
	b[14], b[15] = hi, lo
	return []netip.Addr{v4, netip.AddrFrom16(b)}
}

// preferredSlot is the slot a key asks for first.
func preferredSlot(key model.ServiceKey) uint16 {
	h := fnv.New32a()
	h.Write([]byte(key.Namespace))
	h.Write([]byte{'/'})
	h.Write([]byte(key.Hostname))
	return uint16(h.Sum32())
}

// vipAllocator hands out VIP slots. It is not safe for concurrent use;
// the controller's worker owns it.
type vipAllocator struct {
	byKey  map[model.ServiceKey]uint16
	byslot map[uint16]model.ServiceKey
	// capacity limits the slots in use, for tests of exhaustion; 0 means
	// every usable slot.
	capacity int
}

func newVIPAllocator() *vipAllocator {
	return &vipAllocator{byKey: map[model.ServiceKey]uint16{}, byslot: map[uint16]model.ServiceKey{}}
}

// lookup returns the VIPs of a key that has them.
func (a *vipAllocator) lookup(key model.ServiceKey) ([]netip.Addr, bool) {
	slot, ok := a.byKey[key]
	if !ok {
		return nil, false
	}
	return slotAddrs(slot), true
}

// allocate gives each key without VIPs a slot, in key order. Keys left
// without (the pool is exhausted) are returned.
func (a *vipAllocator) allocate(keys []model.ServiceKey) (failed []model.ServiceKey) {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		if _, ok := a.byKey[k]; ok {
			continue
		}
		slot, ok := a.free(preferredSlot(k))
		if !ok {
			failed = append(failed, k)
			continue
		}
		a.byKey[k] = slot
		a.byslot[slot] = k
	}
	return failed
}

// free returns the first usable free slot from start upwards.
func (a *vipAllocator) free(start uint16) (uint16, bool) {
	if a.capacity > 0 && len(a.byKey) >= a.capacity {
		return 0, false
	}
	s := start
	for range 1 << 16 {
		if _, taken := a.byslot[s]; !taken && slotUsable(s) {
			return s, true
		}
		s++
	}
	return 0, false
}

// release frees a key's slot, if it has one.
func (a *vipAllocator) release(key model.ServiceKey) {
	if slot, ok := a.byKey[key]; ok {
		delete(a.byKey, key)
		delete(a.byslot, slot)
	}
}

func compareKeys(a, b model.ServiceKey) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Hostname, b.Hostname))
}
