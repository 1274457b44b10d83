package address

import (
	"net/netip"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/meshreg/meshreg/address/workloadapi"
	"github.com/meshreg/meshreg/internal/cow"
	"github.com/meshreg/meshreg/model"
)

// edit is one generation being built.
type edit struct {
	addrs  *cow.Editor[string, *workloadapi.Address]
	byIP   *cow.Editor[string, []string]
	events map[string]model.EventType
}

func (e *edit) put(key string, a *workloadapi.Address) {
	old, ok := e.addrs.Get(key)
	if ok && proto.Equal(old, a) {
		return
	}
	newIPs := ipKeys(a)
	if ok {
		if t, seen := e.events[key]; !seen || t == model.EventDelete {
			e.events[key] = model.EventUpdate
		}
	} else if t, seen := e.events[key]; seen && t == model.EventDelete {
		e.events[key] = model.EventUpdate
	} else {
		e.events[key] = model.EventAdd
	}
	e.addrs.Set(key, a)
	if ok {
		if slices.Equal(ipKeys(old), newIPs) {
			return // most changes keep the addresses
		}
		e.unindex(key, old)
	}
	for _, ipk := range newIPs {
		cur, _ := e.byIP.Get(ipk)
		if i, found := slices.BinarySearch(cur, key); !found {
			e.byIP.Set(ipk, slices.Insert(slices.Clone(cur), i, key))
		}
	}
}

func (e *edit) remove(key string) {
	old, ok := e.addrs.Get(key)
	if !ok {
		return
	}
	e.unindex(key, old)
	e.addrs.Delete(key)
	if t, seen := e.events[key]; seen && t == model.EventAdd {
		delete(e.events, key)
	} else {
		e.events[key] = model.EventDelete
	}
}

func (e *edit) unindex(key string, a *workloadapi.Address) {
	for _, ipk := range ipKeys(a) {
		cur, _ := e.byIP.Get(ipk)
		if i, found := slices.BinarySearch(cur, key); found {
			if len(cur) == 1 {
				e.byIP.Delete(ipk)
			} else {
				e.byIP.Set(ipk, slices.Delete(slices.Clone(cur), i, i+1))
			}
		}
	}
}

// ipKeys are the "network/IP" names of a resource: a workload's
// addresses, a service's VIPs.
func ipKeys(a *workloadapi.Address) []string {
	var out []string
	if w := a.GetWorkload(); w != nil {
		for _, b := range w.Addresses {
			if ip, ok := netip.AddrFromSlice(b); ok {
				out = append(out, IPKey(w.Network, ip))
			}
		}
		return out
	}
	for _, na := range a.GetService().GetAddresses() {
		if ip, ok := netip.AddrFromSlice(na.Address); ok {
			out = append(out, IPKey(na.Network, ip))
		}
	}
	return out
}
