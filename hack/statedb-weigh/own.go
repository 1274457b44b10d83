package weigh

import (
	"maps"
	"net/netip"
	"sync/atomic"

	"weigh/cow"
)

// ownVersion is one immutable published version, as meshreg's snapshots.
type ownVersion struct {
	byUID cow.Map[string, *Workload]
	// byNS is a plain Go map; a version never changes it. The next version
	// clones the outer map (200 entries) and each inner set it touches.
	byNS map[string]map[string]struct{}
	byIP cow.Map[netip.Addr, string]
}

// Own holds the index with cow.Map and Go maps.
type Own struct {
	cur atomic.Pointer[ownVersion]
}

func NewOwn() *Own {
	o := &Own{}
	o.cur.Store(&ownVersion{byNS: map[string]map[string]struct{}{}})
	return o
}

// Apply builds the next version from the current one and publishes it.
func (o *Own) Apply(batch []*Workload) {
	old := o.cur.Load()
	uids := old.byUID.Edit()
	ips := old.byIP.Edit()
	byNS := maps.Clone(old.byNS)
	ownedNS := map[string]bool{}
	nsSet := func(ns string) map[string]struct{} {
		if !ownedNS[ns] {
			s := make(map[string]struct{}, len(byNS[ns])+1)
			maps.Copy(s, byNS[ns])
			byNS[ns] = s
			ownedNS[ns] = true
		}
		return byNS[ns]
	}
	for _, w := range batch {
		if prev, ok := uids.Get(w.UID); ok {
			if prev.IP != w.IP {
				ips.Delete(prev.IP)
			}
			if prev.Namespace != w.Namespace {
				delete(nsSet(prev.Namespace), w.UID)
			}
		}
		uids.Set(w.UID, w)
		ips.Set(w.IP, w.UID)
		if _, ok := byNS[w.Namespace][w.UID]; !ok {
			nsSet(w.Namespace)[w.UID] = struct{}{}
		}
	}
	o.cur.Store(&ownVersion{byUID: uids.Done(), byNS: byNS, byIP: ips.Done()})
}

func (o *Own) ByUID(uid string) (*Workload, bool) {
	return o.cur.Load().byUID.Get(uid)
}

func (o *Own) ByIP(ip netip.Addr) (*Workload, bool) {
	v := o.cur.Load()
	uid, ok := v.byIP.Get(ip)
	if !ok {
		return nil, false
	}
	return v.byUID.Get(uid)
}

func (o *Own) ListNamespace(ns string, fn func(*Workload)) {
	v := o.cur.Load()
	for uid := range v.byNS[ns] {
		if w, ok := v.byUID.Get(uid); ok {
			fn(w)
		}
	}
}
