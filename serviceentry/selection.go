package serviceentry

import (
	"maps"
	"slices"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
)

// selection holds, per namespace, the workloads entries may select (valid
// WorkloadEntries and the Pods handed in) and the entries that select,
// each indexed by label: an entry's change reads the workloads that carry
// the rarest pair of its selector, and a workload's change the entries
// indexed under one of its labels, so that either costs what it selects
// rather than the size of its namespace. Only the controller's worker
// uses it.
type selection struct {
	namespaces map[string]*nsSelection
}

// labelPair is one key=value of a label set.
type labelPair struct{ key, value string }

// slot is one selectable workload's place in its namespace's selection:
// the same for as long as a workload of its key is held, whatever its
// versions, so that the label index and the entries that select it hold
// a pointer rather than a copy of the key.
type slot struct {
	key model.WorkloadKey
	wi  *model.WorkloadInstance
}

func compareSlotKey(s *slot, k model.WorkloadKey) int { return s.key.Compare(k) }

// nsSelection is one namespace's part of a selection.
type nsSelection struct {
	workloads map[model.WorkloadKey]*slot
	// byLabel holds the slots of the workloads that carry each pair.
	byLabel map[labelPair]map[*slot]struct{}
	// entries holds the entries with a selector by the pair they are
	// indexed under (indexPair); an entry whose selector is empty, and
	// so selects every workload, under the zero pair.
	entries map[labelPair]map[nsName]*entry
}

func newSelection() *selection { return &selection{namespaces: map[string]*nsSelection{}} }

func (s *selection) ns(name string) *nsSelection {
	n := s.namespaces[name]
	if n == nil {
		n = &nsSelection{
			workloads: map[model.WorkloadKey]*slot{},
			byLabel:   map[labelPair]map[*slot]struct{}{},
			entries:   map[labelPair]map[nsName]*entry{},
		}
		s.namespaces[name] = n
	}
	return n
}

// dropIfEmpty forgets a namespace that holds nothing.
func (s *selection) dropIfEmpty(name string) {
	if n := s.namespaces[name]; n != nil && len(n.workloads) == 0 && len(n.entries) == 0 {
		delete(s.namespaces, name)
	}
}

// workload returns the workload of key in a namespace; nil when absent.
func (s *selection) workload(namespace string, key model.WorkloadKey) *model.WorkloadInstance {
	if n := s.namespaces[namespace]; n != nil {
		if sl := n.workloads[key]; sl != nil {
			return sl.wi
		}
	}
	return nil
}

// setWorkload replaces the workload of key (nil removes it) and returns
// the one it replaced, and the workload's slot: nil once removed.
func (s *selection) setWorkload(namespace string, key model.WorkloadKey, wi *model.WorkloadInstance) (old *model.WorkloadInstance, sl *slot) {
	n := s.ns(namespace)
	sl = n.workloads[key]
	if sl != nil {
		old = sl.wi
	}
	switch {
	case sl == nil && wi == nil:
		s.dropIfEmpty(namespace)
		return nil, nil
	case sl == nil:
		sl = &slot{key: key}
		n.workloads[key] = sl
	case wi != nil && maps.Equal(old.Endpoint.Labels, wi.Endpoint.Labels):
		sl.wi = wi // the same labels: the index stays
		return old, sl
	}
	if old != nil {
		for k, v := range old.Endpoint.Labels {
			index.RemoveFrom(n.byLabel, labelPair{k, v}, sl)
		}
	}
	sl.wi = wi
	if wi == nil {
		delete(n.workloads, key)
		s.dropIfEmpty(namespace)
		return old, nil
	}
	for k, v := range wi.Endpoint.Labels {
		index.AddTo(n.byLabel, labelPair{k, v}, sl, struct{}{})
	}
	return old, sl
}

// indexPair is the pair an entry is indexed under: its selector's pair of
// the least key; the zero pair for an empty selector.
func indexPair(selector map[string]string) labelPair {
	if len(selector) == 0 {
		return labelPair{}
	}
	k := ""
	first := true
	for key := range selector {
		if first || key < k {
			k, first = key, false
		}
	}
	return labelPair{k, selector[k]}
}

// addEntry indexes an entry with a selector; others are not indexed.
func (s *selection) addEntry(e *entry) {
	if e.selector != nil {
		index.AddTo(s.ns(e.ref.Namespace).entries, indexPair(e.selector), e.ref, e)
	}
}

// removeEntry takes an entry out of the index.
func (s *selection) removeEntry(e *entry) {
	if e.selector == nil {
		return
	}
	if n := s.namespaces[e.ref.Namespace]; n != nil {
		index.RemoveFrom(n.entries, indexPair(e.selector), e.ref)
		s.dropIfEmpty(e.ref.Namespace)
	}
}

// entriesFor calls f for each entry of the namespace that could select a
// workload with any of the label sets given (a workload's labels before
// and after a change), once each; f decides with entry.selects.
func (s *selection) entriesFor(namespace string, labelSets []map[string]string, f func(*entry)) {
	n := s.namespaces[namespace]
	if n == nil {
		return
	}
	seen := map[labelPair]bool{}
	visit := func(p labelPair) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, e := range n.entries[p] {
			f(e)
		}
	}
	visit(labelPair{})
	for _, labels := range labelSets {
		for k, v := range labels {
			visit(labelPair{k, v})
		}
	}
}

// selectedBy returns the slots of the workloads an entry selects, sorted
// by key: those that carry the rarest pair of its selector and match the
// rest of it; every workload of its namespace for an empty selector.
func (s *selection) selectedBy(e *entry) []*slot {
	n := s.namespaces[e.ref.Namespace]
	if e.selector == nil || n == nil {
		return nil
	}
	var out []*slot
	if len(e.selector) == 0 {
		out = slices.AppendSeq(make([]*slot, 0, len(n.workloads)), maps.Values(n.workloads))
	} else {
		var rarest map[*slot]struct{}
		for k, v := range e.selector {
			keys := n.byLabel[labelPair{k, v}]
			if len(keys) == 0 {
				return nil // no workload carries this pair
			}
			if rarest == nil || len(keys) < len(rarest) {
				rarest = keys
			}
		}
		for sl := range rarest {
			if e.selects(sl.wi) {
				out = append(out, sl)
			}
		}
	}
	slices.SortFunc(out, func(a, b *slot) int { return a.key.Compare(b.key) })
	return out
}
