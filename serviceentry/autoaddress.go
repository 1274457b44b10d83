package serviceentry

import (
	"cmp"
	"hash/fnv"
	"net/netip"
	"slices"
	"time"

	"github.com/meshreg/meshreg/model"
)

// Auto-allocated VIPs.
//
// A ServiceEntry host gets auto VIPs when the entry that wins its service
// key declares no addresses, its resolution is not NONE, and it does not
// opt out with the label networking.istio.io/enable-autoallocate-ip:
// "false". When the entry's status.addresses hold addresses for the host
// (Istio's IP allocator writes them there), those are its VIPs, as Istio
// reads them: the last IPv4 and the last IPv6 listed. Otherwise, for a
// host that is not a wildcard and a resolution other than DYNAMIC_DNS, the
// registry allocates a pair itself: an IPv4 address in 240.240.0.0/16 and
// its IPv6 counterpart 2001:2::f0f0:XXYY, where XX and YY are the IPv4's
// last two bytes in hex. A pair is a slot: the low 16 bits, skipping those
// whose last byte is 0 or 255 (65,024 slots); a slot a status address
// holds is never allocated.
//
// The allocation is a function of the objects alone, never of the order
// their events came in, so that two replicas agree: keys are allocated in
// priority order (the creation time of the entry that wins the key, then
// namespace, then host), each taking the first free slot from the one its
// FNV-1a hash names, upwards. The allocator keeps that result as keys come
// and go: a newer key never displaces an older one, an older key arriving
// takes its slot from a newer one, which moves on, and a slot freed goes
// to the key that would have had it. Keys left without a slot (the pool is
// exhausted) are the newest.

// labelAutoAllocate opts a ServiceEntry out of auto-allocated VIPs with
// the value "false" (any case).
const labelAutoAllocate = "networking.istio.io/enable-autoallocate-ip"

var (
	autoV4Prefix = [2]byte{240, 240}
	autoV6Prefix = [14]byte{0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0xf0}
	autoV4Pool   = netip.PrefixFrom(netip.AddrFrom4([4]byte{240, 240, 0, 0}), 16)
)

// wantsAutoAddress reports whether a service may get VIPs the registry
// allocates: it declares none, and it is neither a wildcard nor of
// resolution NONE or DYNAMIC_DNS.
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

// addrSlot returns the slot of an address of the IPv4 pool.
func addrSlot(a netip.Addr) (uint16, bool) {
	if !a.Is4() || !autoV4Pool.Contains(a) {
		return 0, false
	}
	b := a.As4()
	return uint16(b[2])<<8 | uint16(b[3]), true
}

// hashSlot is the FNV-1a hash of a key, which names its preferred slot.
func hashSlot(key model.ServiceKey) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key.Namespace))
	h.Write([]byte{'/'})
	h.Write([]byte(key.Hostname))
	return h.Sum32()
}

// vipWant is what a service key asks of the allocator.
type vipWant struct {
	// created is the creation time of the entry that wins the key.
	created time.Time
	// status holds the addresses the entry's status gives the host; when
	// set, they are the key's VIPs and it takes no slot.
	status []netip.Addr
}

// allocKey is a key the allocator holds.
type allocKey struct {
	want vipWant
	slot uint16
	// placed: the key holds slot; pinned: it holds a status address of
	// the pool at slot; neither: it waits for a free slot.
	placed, pinned bool
}

// vipAllocator hands out VIP slots. It is not safe for concurrent use;
// the controller's worker owns it.
type vipAllocator struct {
	keys   map[model.ServiceKey]*allocKey
	bySlot map[uint16]model.ServiceKey
	// pins counts, per slot, the keys whose status address holds it.
	pins map[uint16]int
	// waiting holds the keys that want a slot and have none.
	waiting map[model.ServiceKey]bool
	// moved collects the keys whose VIPs changed since takeMoved.
	moved map[model.ServiceKey]bool
	// space is the number of slots, 1<<16; tests of exhaustion make it
	// smaller.
	space int
}

func newVIPAllocator() *vipAllocator {
	return &vipAllocator{
		keys: map[model.ServiceKey]*allocKey{}, bySlot: map[uint16]model.ServiceKey{}, pins: map[uint16]int{},
		waiting: map[model.ServiceKey]bool{}, moved: map[model.ServiceKey]bool{}, space: 1 << 16,
	}
}

// lookup returns the VIPs of a key, and whether it wants some but the pool
// has none left for it.
func (a *vipAllocator) lookup(key model.ServiceKey) (vips []netip.Addr, exhausted bool) {
	k := a.keys[key]
	switch {
	case k == nil:
		return nil, false
	case len(k.want.status) > 0:
		return slices.Clone(k.want.status), false
	case k.placed:
		return slotAddrs(k.slot), false
	}
	return nil, true
}

// set makes a key want w; nil removes it.
func (a *vipAllocator) set(key model.ServiceKey, w *vipWant) {
	old := a.keys[key]
	if old == nil && w == nil {
		return
	}
	if old != nil && w != nil && old.want.created.Equal(w.created) && slices.Equal(old.want.status, w.status) {
		return
	}
	a.moved[key] = true
	if old != nil {
		a.remove(key, old)
	}
	if w == nil {
		return
	}
	k := &allocKey{want: *w}
	a.keys[key] = k
	if len(w.status) == 0 {
		a.insert(key)
		return
	}
	for _, addr := range w.status {
		if slot, ok := addrSlot(addr); ok {
			k.slot, k.pinned = slot, true
			a.pin(slot)
			break
		}
	}
}

// takeMoved returns and forgets the keys whose VIPs may have changed.
func (a *vipAllocator) takeMoved() map[model.ServiceKey]bool {
	m := a.moved
	a.moved = map[model.ServiceKey]bool{}
	return m
}

// before reports whether key x has priority over key y.
func (a *vipAllocator) before(x, y model.ServiceKey) bool {
	return comparePriority(x, a.keys[x].want, y, a.keys[y].want) < 0
}

// comparePriority orders keys for allocation: by the creation time of
// the entry that wins the key, then namespace, then host. The namespace
// comes before the host here, unlike in model.ServiceKey.Compare: this
// order decides which key keeps a contested slot, so another would move
// VIPs already handed out.
func comparePriority(x model.ServiceKey, xw vipWant, y model.ServiceKey, yw vipWant) int {
	return cmp.Or(xw.created.Compare(yw.created), cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Hostname, y.Hostname))
}

// insert places a key that has no slot: it takes the first slot from its
// preferred one that is usable, not pinned, and free or held by a key of
// lower priority, which is then placed in turn.
func (a *vipAllocator) insert(key model.ServiceKey) {
	for cur := key; ; {
		a.moved[cur] = true
		slot, ok := a.search(cur)
		if !ok {
			a.waiting[cur] = true
			return
		}
		delete(a.waiting, cur)
		holder, held := a.bySlot[slot]
		k := a.keys[cur]
		k.slot, k.placed = slot, true
		a.bySlot[slot] = cur
		if !held {
			return
		}
		a.keys[holder].placed = false
		cur = holder
	}
}

// search finds the slot insert gives a key.
func (a *vipAllocator) search(key model.ServiceKey) (uint16, bool) {
	start := int(hashSlot(key) % uint32(a.space))
	for i := range a.space {
		slot := uint16((start + i) % a.space)
		if !slotUsable(slot) || a.pins[slot] > 0 {
			continue
		}
		if holder, held := a.bySlot[slot]; !held || a.before(key, holder) {
			return slot, true
		}
	}
	return 0, false
}

// remove forgets a key and hands on what it held.
func (a *vipAllocator) remove(key model.ServiceKey, k *allocKey) {
	delete(a.keys, key)
	delete(a.waiting, key)
	switch {
	case k.placed:
		delete(a.bySlot, k.slot)
		a.refill(k.slot)
	case k.pinned:
		if a.pins[k.slot]--; a.pins[k.slot] == 0 {
			delete(a.pins, k.slot)
			a.refill(k.slot)
		}
	}
}

// pin reserves a slot for a status address; a key holding it moves on.
func (a *vipAllocator) pin(slot uint16) {
	a.pins[slot]++
	if holder, held := a.bySlot[slot]; held {
		delete(a.bySlot, slot)
		a.keys[holder].placed = false
		a.insert(holder)
	}
}

// refill re-places the keys a freed slot may now go to: those placed in
// the run of taken slots that follows it (their probing passed it), and
// those waiting for a slot, in priority order.
func (a *vipAllocator) refill(freed uint16) {
	var again []model.ServiceKey
	for i := 1; i < a.space; i++ {
		slot := uint16((int(freed) + i) % a.space)
		holder, held := a.bySlot[slot]
		if !held {
			if slotUsable(slot) && a.pins[slot] == 0 {
				break // the run ends at a free slot
			}
			continue
		}
		delete(a.bySlot, slot)
		a.keys[holder].placed = false
		again = append(again, holder)
	}
	for k := range a.waiting {
		again = append(again, k)
	}
	slices.SortFunc(again, func(x, y model.ServiceKey) int { return comparePriority(x, a.keys[x].want, y, a.keys[y].want) })
	for _, k := range again {
		a.insert(k)
	}
}
