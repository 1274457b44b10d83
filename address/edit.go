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
	addrs *cow.Editor[string, *workloadapi.Address]
	// byIP holds the keys at each "network/IP"; bySvc the workloads
	// that back each service, by its key.
	byIP   *cow.Editor[string, []string]
	bySvc  *cow.Editor[string, []string]
	events map[string]model.EventType
}

func (e *edit) put(key string, a *workloadapi.Address) {
	old, ok := e.addrs.Get(key)
	if ok && proto.Equal(old, a) {
		return
	}
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
	var oldIPs, oldSvcs []string
	if ok {
		oldIPs, oldSvcs = ipKeys(old), backed(old)
	}
	reindex(e.byIP, key, oldIPs, ipKeys(a))
	reindex(e.bySvc, key, oldSvcs, backed(a))
}

func (e *edit) remove(key string) {
	old, ok := e.addrs.Get(key)
	if !ok {
		return
	}
	reindex(e.byIP, key, ipKeys(old), nil)
	reindex(e.bySvc, key, backed(old), nil)
	e.addrs.Delete(key)
	if t, seen := e.events[key]; seen && t == model.EventAdd {
		delete(e.events, key)
	} else {
		e.events[key] = model.EventDelete
	}
}

// reindex moves key in a secondary index from the entries of was to
// those of is; entries in both are left alone (most changes keep a
// resource's addresses and services).
func reindex(idx *cow.Editor[string, []string], key string, was, is []string) {
	for _, k := range was {
		if slices.Contains(is, k) {
			continue
		}
		cur, _ := idx.Get(k)
		if i, found := slices.BinarySearch(cur, key); found {
			if len(cur) == 1 {
				idx.Delete(k)
			} else {
				idx.Set(k, slices.Delete(slices.Clone(cur), i, i+1))
			}
		}
	}
	for _, k := range is {
		if slices.Contains(was, k) {
			continue
		}
		cur, _ := idx.Get(k)
		if i, found := slices.BinarySearch(cur, key); !found {
			idx.Set(k, slices.Insert(slices.Clone(cur), i, key))
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

// backed returns the keys of the services a workload backs.
func backed(a *workloadapi.Address) []string {
	w := a.GetWorkload()
	if w == nil || len(w.Services) == 0 {
		return nil
	}
	out := make([]string, 0, len(w.Services))
	for k := range w.Services {
		out = append(out, k)
	}
	return out
}

// produce sets the workloads an input now produces (see
// produceAddresses).
func (x *Index) produce(e *edit, src source, ws []*workloadapi.Workload, diags []model.Diagnostic) bool {
	out := make([]*workloadapi.Address, 0, len(ws))
	for _, w := range ws {
		out = append(out, workloadAddress(w))
	}
	return x.produceAddresses(e, src, out, diags)
}

// produceAddresses sets the resources an input now produces, removing
// those it no longer does, and its diagnostics; it reports whether the
// diagnostics changed.
func (x *Index) produceAddresses(e *edit, src source, out []*workloadapi.Address, diags []model.Diagnostic) bool {
	st := x.st
	keys := make([]string, 0, len(out))
	for _, a := range out {
		k := ResourceKey(a)
		keys = append(keys, k)
		e.put(k, a)
	}
	for _, k := range st.produced[src] {
		if !slices.Contains(keys, k) {
			e.remove(k)
		}
	}
	if len(keys) == 0 {
		delete(st.produced, src)
	} else {
		st.produced[src] = keys
	}
	old := st.diags[src]
	if len(diags) == 0 {
		delete(st.diags, src)
	} else {
		st.diags[src] = diags
	}
	return !sameDiags(old, diags)
}

// ResourceKey returns a resource's key: a workload's uid, a service's
// "namespace/hostname".
func ResourceKey(a *workloadapi.Address) string {
	if w := a.GetWorkload(); w != nil {
		return w.Uid
	}
	s := a.GetService()
	return serviceKey(s.Namespace, s.Hostname)
}
