package proxyview

import (
	"cmp"
	"slices"
	"sync"

	"github.com/meshreg/meshreg/model"
)

// scope is where a service is visible, from its exportTo (or the mesh's
// default when it declares none), with Istio's rules: "*" makes it
// public whatever else is listed; otherwise "~" hides it from everyone;
// otherwise it is visible in the namespaces listed, "." standing for its
// own. With capped (Options.ServiceEntryVisibility), a ServiceEntry's
// visibility narrows it, unless its exportTo is "~" alone: Namespace
// to its own namespace when exportTo includes it ("*", "." or its name),
// else to none; None to none.
type scope struct {
	public     bool
	namespaces []string // sorted, without duplicates; nil when public or hidden
}

func scopeOf(svc *model.Service, defaults []string, capped bool) scope {
	exportTo := svc.ExportTo
	if len(exportTo) == 0 {
		exportTo = defaults
	}
	if capped && !slices.Equal(exportTo, []string{"~"}) {
		switch svc.Visibility {
		case model.VisibilityNamespace:
			if slices.Contains(exportTo, "*") || slices.Contains(exportTo, ".") || slices.Contains(exportTo, svc.Namespace) {
				return scope{namespaces: []string{svc.Namespace}}
			}
			return scope{}
		case model.VisibilityNone:
			return scope{}
		}
	}
	if slices.Contains(exportTo, "*") {
		return scope{public: true}
	}
	if slices.Contains(exportTo, "~") {
		return scope{}
	}
	var s scope
	for _, e := range exportTo {
		if e == "." {
			e = svc.Namespace
		}
		if i, found := slices.BinarySearch(s.namespaces, e); !found {
			s.namespaces = slices.Insert(s.namespaces, i, e)
		}
	}
	return s
}

// visibleIn reports whether the scope includes namespace ns.
func (s scope) visibleIn(ns string) bool {
	if s.public {
		return true
	}
	_, found := slices.BinarySearch(s.namespaces, ns)
	return found
}

// compareVisible orders a visibility list: by hostname, then the service
// that wins the hostname first (model.ComparePrecedence).
func compareVisible(a, b *model.Service) int {
	return cmp.Or(cmp.Compare(a.Hostname, b.Hostname), model.ComparePrecedence(a, b))
}

// visibility indexes the services by where they are visible: the public
// ones in one list, the others in a list per namespace they are exported
// to. It is immutable once built; edit builds the next one, copying the
// lists it changes.
type visibility struct {
	public      []*model.Service
	byNamespace map[string][]*model.Service

	// mu guards visible, the memo of each namespace's visible services
	// for this index.
	mu      sync.Mutex
	visible map[string][]*model.Service
}

// visibilityEdit builds the next visibility index from one.
type visibilityEdit struct {
	next        *visibility
	ownsPublic  bool
	ownsNS      bool
	ownedNSList map[string]bool
}

func (v *visibility) edit() *visibilityEdit {
	return &visibilityEdit{
		next:        &visibility{public: v.public, byNamespace: v.byNamespace, visible: map[string][]*model.Service{}},
		ownedNSList: map[string]bool{},
	}
}

// remove takes svc, indexed with scope s, out of the index.
func (e *visibilityEdit) remove(svc *model.Service, s scope) {
	if s.public {
		e.publicList(func(l []*model.Service) []*model.Service { return without(l, svc) })
		return
	}
	for _, ns := range s.namespaces {
		e.namespaceList(ns, func(l []*model.Service) []*model.Service { return without(l, svc) })
	}
}

// add puts svc, with scope s, in the index.
func (e *visibilityEdit) add(svc *model.Service, s scope) {
	if s.public {
		e.publicList(func(l []*model.Service) []*model.Service { return with(l, svc) })
		return
	}
	for _, ns := range s.namespaces {
		e.namespaceList(ns, func(l []*model.Service) []*model.Service { return with(l, svc) })
	}
}

func (e *visibilityEdit) publicList(f func([]*model.Service) []*model.Service) {
	if !e.ownsPublic {
		e.next.public = slices.Clone(e.next.public)
		e.ownsPublic = true
	}
	e.next.public = f(e.next.public)
}

func (e *visibilityEdit) namespaceList(ns string, f func([]*model.Service) []*model.Service) {
	if !e.ownsNS {
		m := make(map[string][]*model.Service, len(e.next.byNamespace)+1)
		for k, l := range e.next.byNamespace {
			m[k] = l
		}
		e.next.byNamespace = m
		e.ownsNS = true
	}
	l := e.next.byNamespace[ns]
	if !e.ownedNSList[ns] {
		l = slices.Clone(l)
		e.ownedNSList[ns] = true
	}
	if l = f(l); len(l) == 0 {
		delete(e.next.byNamespace, ns)
		return
	}
	e.next.byNamespace[ns] = l
}

func (e *visibilityEdit) done() *visibility { return e.next }

// with inserts svc into the sorted list l (which the caller owns).
func with(l []*model.Service, svc *model.Service) []*model.Service {
	i, _ := slices.BinarySearchFunc(l, svc, compareVisible)
	return slices.Insert(l, i, svc)
}

// without removes svc, found by identity or key, from the sorted list l
// (which the caller owns).
func without(l []*model.Service, svc *model.Service) []*model.Service {
	i, _ := slices.BinarySearchFunc(l, svc.Hostname, func(s *model.Service, h model.Hostname) int {
		return cmp.Compare(s.Hostname, h)
	})
	for ; i < len(l) && l[i].Hostname == svc.Hostname; i++ {
		if l[i].Key() == svc.Key() {
			return slices.Delete(l, i, i+1)
		}
	}
	return l
}

// visibleFrom returns the services visible from namespace ns, one per
// hostname, sorted by hostname. Of the services visible from ns that
// claim a hostname, the first of these wins: a service of ns itself (of
// those, a Kubernetes Service first); a Kubernetes Service of another
// namespace; one of another namespace exported to ns by name; a public
// one of another namespace; and within each, the first by
// model.ComparePrecedence. This is the choice Istio's sidecar scope
// makes (checked against Istio's xDS server by the EDS scenarios of
// testdata/eds). The result is memoized per index and shared.
func (v *visibility) visibleFrom(ns string) []*model.Service {
	v.mu.Lock()
	out, ok := v.visible[ns]
	v.mu.Unlock()
	if ok {
		return out
	}
	out = mergeVisible(ns, v.byNamespace[ns], v.public)
	v.mu.Lock()
	v.visible[ns] = out
	v.mu.Unlock()
	return out
}

// Ranks of the services that claim one hostname in a namespace, the
// winner first.
const (
	rankOwn = iota
	rankKubernetes
	rankExported
	rankPublic
)

func rankIn(ns string, svc *model.Service, public bool) int {
	switch {
	case svc.Namespace == ns:
		return rankOwn
	case svc.Provider == model.Kubernetes:
		return rankKubernetes
	case !public:
		return rankExported
	}
	return rankPublic
}

// mergeVisible merges namespace ns's list with the public one (both
// sorted by compareVisible), keeping the winner of each hostname.
func mergeVisible(ns string, exported, public []*model.Service) []*model.Service {
	out := make([]*model.Service, 0, len(exported)+len(public))
	i, j := 0, 0
	for i < len(exported) || j < len(public) {
		var h model.Hostname
		switch {
		case j == len(public):
			h = exported[i].Hostname
		case i == len(exported):
			h = public[j].Hostname
		default:
			h = min(exported[i].Hostname, public[j].Hostname)
		}
		var best *model.Service
		bestRank := 0
		consider := func(svc *model.Service, public bool) {
			r := rankIn(ns, svc, public)
			if best == nil || r < bestRank || r == bestRank && model.ComparePrecedence(svc, best) < 0 {
				best, bestRank = svc, r
			}
		}
		for ; i < len(exported) && exported[i].Hostname == h; i++ {
			consider(exported[i], false)
		}
		for ; j < len(public) && public[j].Hostname == h; j++ {
			consider(public[j], true)
		}
		out = append(out, best)
	}
	return out
}
