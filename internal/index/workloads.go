package index

import (
	"net/netip"
	"slices"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/ipmap"
	"github.com/meshreg/meshreg/model"
)

// Workloads holds workload instances by key and by address. The zero
// value is empty and ready to use.
type Workloads struct {
	byKey map[model.WorkloadKey]*model.WorkloadInstance
	// byIP holds each address's workloads sorted by key. Its lists are
	// replaced, never changed in place: ByIP hands them out.
	byIP ipmap.Map[[]*model.WorkloadInstance]
	// view is every workload sorted by key: built by Sorted, dropped by
	// every write.
	view atomic.Pointer[[]*model.WorkloadInstance]
}

// Reserve makes the empty index ready for about n workloads, of one
// address each.
func (x *Workloads) Reserve(n int) {
	x.byKey = make(map[model.WorkloadKey]*model.WorkloadInstance, n)
	x.byIP.Reserve(n)
}

// Len returns the number of workloads.
func (x *Workloads) Len() int { return len(x.byKey) }

// Get returns the workload with the key, or nil.
func (x *Workloads) Get(key model.WorkloadKey) *model.WorkloadInstance { return x.byKey[key] }

// Put stores w in place of the workload with its key, and returns the
// workload it replaced, or nil.
func (x *Workloads) Put(w *model.WorkloadInstance) (prev *model.WorkloadInstance) {
	if x.byKey == nil {
		x.byKey = map[model.WorkloadKey]*model.WorkloadInstance{}
	}
	key := w.Key()
	prev = x.byKey[key]
	x.byKey[key] = w
	if prev != nil && slices.Equal(prev.Endpoint.Addresses, w.Endpoint.Addresses) {
		// Same addresses and key: w takes prev's place in each list.
		for _, ip := range w.Endpoint.Addresses {
			x.byIP.Set(ip, replaced(x.byIP.Get(ip), prev, w))
		}
	} else {
		if prev != nil {
			x.unindex(prev)
		}
		for _, ip := range w.Endpoint.Addresses {
			x.byIP.Set(ip, insertSorted(x.byIP.Get(ip), w))
		}
	}
	x.view.Store(nil)
	return prev
}

// Delete removes the workload with the key, and returns it, or nil.
func (x *Workloads) Delete(key model.WorkloadKey) (prev *model.WorkloadInstance) {
	prev = x.byKey[key]
	if prev == nil {
		return nil
	}
	delete(x.byKey, key)
	x.unindex(prev)
	x.view.Store(nil)
	return prev
}

// ByIP returns the workloads with the address, sorted by key, in a slice
// that later writes leave alone.
func (x *Workloads) ByIP(ip netip.Addr) []*model.WorkloadInstance { return x.byIP.Get(ip) }

func (x *Workloads) unindex(w *model.WorkloadInstance) {
	for _, ip := range w.Endpoint.Addresses {
		list := slices.DeleteFunc(slices.Clone(x.byIP.Get(ip)), func(o *model.WorkloadInstance) bool { return o == w })
		if len(list) == 0 {
			x.byIP.Delete(ip)
		} else {
			x.byIP.Set(ip, list)
		}
	}
}

// Cached returns the view Sorted built, if no write has dropped it since,
// else nil. It needs no lock.
func (x *Workloads) Cached() []*model.WorkloadInstance {
	if v := x.view.Load(); v != nil {
		return *v
	}
	return nil
}

// Sorted returns every workload, sorted by key (model.WorkloadKey.Compare),
// in a slice kept until the next write; never nil.
func (x *Workloads) Sorted() []*model.WorkloadInstance {
	if v := x.view.Load(); v != nil {
		return *v
	}
	out := make([]*model.WorkloadInstance, 0, len(x.byKey))
	for _, w := range x.byKey {
		out = append(out, w)
	}
	slices.SortFunc(out, compareWorkloads)
	x.view.Store(&out)
	return out
}

// replaced returns a copy of list with prev replaced by w.
func replaced(list []*model.WorkloadInstance, prev, w *model.WorkloadInstance) []*model.WorkloadInstance {
	i := slices.Index(list, prev)
	if i < 0 {
		return insertSorted(list, w)
	}
	out := slices.Clone(list)
	out[i] = w
	return out
}

// insertSorted returns a copy of list with w inserted in key order.
func insertSorted(list []*model.WorkloadInstance, w *model.WorkloadInstance) []*model.WorkloadInstance {
	i, _ := slices.BinarySearchFunc(list, w, compareWorkloads)
	out := make([]*model.WorkloadInstance, 0, len(list)+1)
	out = append(out, list[:i]...)
	out = append(out, w)
	return append(out, list[i:]...)
}

// compareWorkloads orders workloads by key.
func compareWorkloads(a, b *model.WorkloadInstance) int { return a.Key().Compare(b.Key()) }
