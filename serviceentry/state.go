package serviceentry

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/internal/intern"
	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
)

// state is the controller's view of its objects and what it derived from
// them. Only the controller's worker goroutine uses it; results are
// written to the store, which publishes them.
type state struct {
	c     convCtx
	log   *slog.Logger
	store *store.Store
	// shard is the controller's: External in its cluster.
	shard model.ShardKey
	alloc *vipAllocator

	// entries holds the valid ServiceEntries.
	entries map[nsName]*entry
	// byKey holds, per service key, the entries that declare it.
	byKey map[model.ServiceKey]map[nsName]*entry
	// sel holds the selectable workloads (valid WorkloadEntries and the
	// Pods handed in) and the entries with a workloadSelector, indexed
	// for selection.
	sel *selection
	// labels shares the label maps of the WorkloadEntries' instances
	// (those of sel), which its endpoints share in turn.
	labels *intern.Counted
}

func newState(c convCtx, st *store.Store, log *slog.Logger) *state {
	return &state{
		c:       c,
		log:     log,
		store:   st,
		shard:   model.ShardKey{Provider: model.External, Cluster: c.Cluster},
		alloc:   newVIPAllocator(),
		entries: map[nsName]*entry{},
		byKey:   map[model.ServiceKey]map[nsName]*entry{},
		sel:     newSelection(),
		labels:  intern.NewCounted(),
	}
}

// dirty collects the service keys whose service or endpoints must be
// recomputed.
type dirty map[model.ServiceKey]struct{}

func (d dirty) add(keys ...model.ServiceKey) {
	for _, k := range keys {
		d[k] = struct{}{}
	}
}

func owner(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (s *state) diagnostic(sev model.Severity, kind, namespace, name, msg string) model.Diagnostic {
	return model.Diagnostic{Severity: sev, Kind: kind, Namespace: namespace, Name: name, Cluster: s.c.Cluster, Message: msg}
}

// setServiceEntry applies the current version of a ServiceEntry, nil when
// deleted, with what it reads of its namespace.
func (s *state) setServiceEntry(ref nsName, se *networkingv1.ServiceEntry, ns nsView, d dirty) {
	if old := s.entries[ref]; old != nil {
		s.removeEntry(old)
		d.add(old.keys()...)
	}
	diagOwner := owner("ServiceEntry", ref.Namespace, ref.Name)
	if se == nil {
		s.store.SetDiagnostics(diagOwner, nil)
		return
	}
	e, err := newEntry(se, s.c, ns)
	if err != nil {
		s.log.Warn("invalid ServiceEntry", "namespace", ref.Namespace, "name", ref.Name, "error", err)
		s.store.SetDiagnostics(diagOwner, []model.Diagnostic{s.diagnostic(model.Error, "ServiceEntry", ref.Namespace, ref.Name,
			"invalid, not used: "+err.Error())})
		return
	}
	var ds []model.Diagnostic
	for _, w := range e.warnings {
		ds = append(ds, s.diagnostic(model.Warning, "ServiceEntry", ref.Namespace, ref.Name, w))
	}
	s.store.SetDiagnostics(diagOwner, ds)
	s.selectWorkloads(e)
	s.addEntry(e)
	d.add(e.keys()...)
}

func (s *state) addEntry(e *entry) {
	s.entries[e.ref] = e
	s.sel.addEntry(e)
	for _, k := range e.keys() {
		index.AddTo(s.byKey, k, e.ref, e)
	}
}

func (s *state) removeEntry(e *entry) {
	delete(s.entries, e.ref)
	s.sel.removeEntry(e)
	for _, k := range e.keys() {
		index.RemoveFrom(s.byKey, k, e.ref)
	}
}

// setWorkloadEntry applies the current version of a WorkloadEntry, nil
// when deleted: it is validated, published as a workload instance, and
// the entries that select it (before or after) are recomputed.
func (s *state) setWorkloadEntry(ref nsName, we *networkingv1.WorkloadEntry, d dirty) {
	key := model.WorkloadKey{Cluster: s.c.Cluster, Kind: model.KindWorkloadEntry, Namespace: ref.Namespace, Name: ref.Name}
	diagOwner := owner("WorkloadEntry", ref.Namespace, ref.Name)
	var wi *model.WorkloadInstance
	switch {
	case we == nil:
		s.store.SetDiagnostics(diagOwner, nil)
	default:
		warnings, err := validateWorkloadEntry(we)
		switch {
		case err != nil:
			s.log.Warn("invalid WorkloadEntry", "namespace", ref.Namespace, "name", ref.Name, "error", err)
			s.store.SetDiagnostics(diagOwner, []model.Diagnostic{s.diagnostic(model.Error, "WorkloadEntry", ref.Namespace, ref.Name,
				"invalid, not used: "+err.Error())})
		case !workloadEntryHealthy(we):
			s.store.SetDiagnostics(diagOwner, []model.Diagnostic{s.diagnostic(model.Warning, "WorkloadEntry", ref.Namespace, ref.Name,
				"health checks enabled and its status is not Healthy: not used until it is")})
		default:
			var ds []model.Diagnostic
			for _, w := range warnings {
				ds = append(ds, s.diagnostic(model.Warning, "WorkloadEntry", ref.Namespace, ref.Name, w))
			}
			s.store.SetDiagnostics(diagOwner, ds)
			wi = convertWorkloadEntry(we, s.c)
			wi.Endpoint.Labels = s.labels.Hold(wi.Endpoint.Labels)
		}
	}
	if old := s.sel.workload(ref.Namespace, key); old != nil {
		s.labels.Release(old.Endpoint.Labels) // the entry's previous instance
	}
	if wi == nil {
		s.store.DeleteWorkload(key)
	} else {
		s.store.UpsertWorkload(wi)
	}
	s.setWorkload(key, ref.Namespace, wi, d)
}

// setWorkload replaces a selectable workload (nil removes it) and
// recomputes the entries of its namespace that select it before or after.
func (s *state) setWorkload(key model.WorkloadKey, namespace string, wi *model.WorkloadInstance, d dirty) {
	if s.sel.workload(namespace, key) == nil && wi == nil {
		return
	}
	old, sl := s.sel.setWorkload(namespace, key, wi)
	var labelSets []map[string]string
	for _, w := range []*model.WorkloadInstance{old, wi} {
		if w != nil {
			labelSets = append(labelSets, w.Endpoint.Labels)
		}
	}
	s.sel.entriesFor(namespace, labelSets, func(e *entry) {
		if e.selects(old) || e.selects(wi) {
			s.reselect(e, key, sl, e.selects(wi))
			d.add(e.keys()...)
		}
	})
}

// reselect records that the workload of key, which changed, is now
// selected by e (through its slot sl) or not, and recomputes the
// endpoints of the workloads e selects: a workload's change costs the
// entry its selected workloads, not a scan of its namespace.
func (s *state) reselect(e *entry, key model.WorkloadKey, sl *slot, selected bool) {
	i, found := slices.BinarySearchFunc(e.selectedSlots, key, compareSlotKey)
	switch {
	case selected && !found:
		e.selectedSlots = slices.Insert(e.selectedSlots, i, sl)
	case !selected && found:
		e.selectedSlots = slices.Delete(e.selectedSlots, i, i+1)
	}
	s.selectedEndpoints(e)
}

// selectWorkloads finds the workloads a new or changed entry selects
// (through the selection's label index: the workloads carrying its
// selector's rarest pair, not its namespace's) and recomputes their
// endpoints.
func (s *state) selectWorkloads(e *entry) {
	e.selectedSlots = s.sel.selectedBy(e)
	s.selectedEndpoints(e)
}

// selectedEndpoints recomputes the endpoints of the workloads e selects
// (e.selectedSlots), in the order of their keys.
func (s *state) selectedEndpoints(e *entry) {
	e.selected = nil
	for _, sl := range e.selectedSlots {
		e.selected = append(e.selected, workloadEndpoints(sl.wi, e.ports, e.res, s.c)...)
	}
}

// flush recomputes the service and endpoints of each dirty key and writes
// them to the store. VIP allocation follows the keys' winners first, and
// the keys whose VIPs that moves are written too.
func (s *state) flush(d dirty) {
	for k := range d {
		s.alloc.set(k, s.vipWant(k, s.precedence(k)))
	}
	d.add(slices.Collect(maps.Keys(s.alloc.takeMoved()))...)
	for _, k := range slices.SortedFunc(maps.Keys(d), model.ServiceKey.Compare) {
		s.writeKey(k, s.precedence(k))
	}
}

// precedence returns the entries that declare a key, the winner first:
// the one whose service for the key wins model.ComparePrecedence (the
// oldest, then by name).
func (s *state) precedence(k model.ServiceKey) []*entry {
	return slices.SortedFunc(maps.Values(s.byKey[k]), func(a, b *entry) int {
		return model.ComparePrecedence(a.service(k.Hostname), b.service(k.Hostname))
	})
}

// vipWant returns what a key asks of the VIP allocator, nil for nothing:
// the winning entry's status addresses for the host, or a slot when the
// registry allocates for it (see autoaddress.go).
func (s *state) vipWant(k model.ServiceKey, es []*entry) *vipWant {
	if len(es) == 0 || !es[0].autoVIPs {
		return nil
	}
	w := &vipWant{created: es[0].created, status: es[0].statusVIPs[k.Hostname]}
	if len(w.status) == 0 && !wantsAutoAddress(es[0].service(k.Hostname)) {
		return nil
	}
	return w
}

// writeKey writes one service key: the service of the entry that wins
// precedence, with the ports of the younger entries merged in (see
// mergeService), and the endpoints of every entry declaring it for the
// merged ports (see mergeEndpoints). A younger entry's port the service
// does not have as declared is a warning on that entry.
func (s *state) writeKey(k model.ServiceKey, es []*entry) {
	diagOwner := owner("ServiceEntryHost", k.Namespace, string(k.Hostname))
	if len(es) == 0 {
		s.store.DeleteService(k)
		s.store.SetEndpoints(s.shard, k, nil)
		s.store.SetDiagnostics(diagOwner, nil)
		return
	}
	winner := es[0]
	svc, skipped := mergeService(k.Hostname, es)
	var ds []model.Diagnostic
	if vips, exhausted := s.alloc.lookup(k); len(vips) > 0 {
		cp := *svc
		cp.AutoAddresses = vips
		svc = &cp
	} else if exhausted {
		ds = append(ds, s.diagnostic(model.Warning, "ServiceEntry", k.Namespace, winner.ref.Name,
			fmt.Sprintf("host %s: no VIP left to allocate", k.Hostname)))
	}
	s.store.UpsertService(svc)
	for _, u := range skipped {
		ds = append(ds, s.diagnostic(model.Warning, "ServiceEntry", k.Namespace, u.entry.ref.Name,
			unmergedMessage(k.Hostname, winner, svc, u)))
	}
	s.store.SetEndpoints(s.shard, k, mergeEndpoints(svc, es))
	s.store.SetDiagnostics(diagOwner, ds)
}

// unmergedMessage says why a younger entry's port is not the host's as
// declared, and what became of its endpoints: they serve the host's port
// of the same name, if there is one, else they are not used.
func unmergedMessage(host model.Hostname, winner *entry, svc *model.Service, u unmerged) string {
	var why string
	switch {
	case len(u.differs) > 0:
		why = fmt.Sprintf("this entry differs from the oldest entry for the host, %s, in %s, so their ports do not merge",
			winner.ref.Name, strings.Join(u.differs, ", "))
	case u.held.Port == u.port.Port:
		why = fmt.Sprintf("entry %s declares port %d as %s, which is kept", u.holder.ref.Name, u.held.Port, describePort(u.held))
	default:
		why = fmt.Sprintf("entry %s gives the name %s to port %d, which is kept", u.holder.ref.Name, u.held.Name, u.held.Port)
	}
	used := "its endpoints are not used"
	if p, ok := svc.PortByName(u.port.Name); ok {
		used = fmt.Sprintf("its endpoints serve the host's port %d of that name", p.Port)
	}
	return fmt.Sprintf("host %s: port %d (%s) not merged into the host: %s; %s", host, u.port.Port, describePort(u.port), why, used)
}

// describePort names a port and its protocol: "http/HTTP".
func describePort(p model.Port) string {
	return p.Name + "/" + string(p.Protocol)
}
