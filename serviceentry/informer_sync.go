package serviceentry

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/cache"
)

// How an InformerSource's handlers join its informers, its own or a
// control plane's, and how it tells that they have listed.

// kindInformer is an informer of the source, and the kind of its
// objects.
type kindInformer struct {
	kind Kind
	inf  cache.SharedIndexInformer
}

// addCRD adds the informer of an Istio kind.
func (s *InformerSource) addCRD(kind Kind, inf cache.SharedIndexInformer) {
	resource := map[Kind]string{KindServiceEntry: "serviceentries", KindWorkloadEntry: "workloadentries"}[kind]
	s.crds = append(s.crds, &crdInformer{resource: resource, kind: kind, inf: inf})
	s.kinds = append(s.kinds, kindInformer{kind, inf})
}

// addHandlers adds the source's handler to every informer; one that
// refuses it (a stopped shared informer) is an error, and the handlers
// added before it are removed.
func (s *InformerSource) addHandlers() error {
	regs := map[Kind]cache.ResourceEventHandlerRegistration{}
	for _, k := range s.kinds {
		h := func(obj any) { s.notify(k.kind, obj) }
		reg, err := k.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    h,
			UpdateFunc: func(_, obj any) { h(obj) },
			DeleteFunc: h,
		})
		if err != nil {
			s.removeHandlers(regs)
			return fmt.Errorf("serviceentry: adding the source's handler to the %s informer: %w", k.kind, err)
		}
		regs[k.kind] = reg
	}
	s.regs.Store(&regs)
	return nil
}

// removeHandlers removes the source's handlers: a shared informer calls
// the source no more once Run has returned.
func (s *InformerSource) removeHandlers(regs map[Kind]cache.ResourceEventHandlerRegistration) {
	for _, k := range s.kinds {
		if reg := regs[k.kind]; reg != nil {
			// Only a stopped informer refuses, and it calls no handler.
			_ = k.inf.RemoveEventHandler(reg)
		}
	}
}

// signalSynced closes s.synced once every kind started has listed (with
// InformerOptions.CRDPollInterval, a kind the cluster did not serve when
// first asked counts as listed, as in HasSynced) and the namespaces
// have, as the informers' HasSyncedChecker channels say. Run starts it
// once each kind is started or known to be late.
func (s *InformerSource) signalSynced(ctx context.Context) {
	regs := *s.regs.Load()
	var checkers []cache.DoneChecker
	for _, k := range s.crds {
		if !k.late.Load() {
			checkers = append(checkers, regs[k.kind].HasSyncedChecker())
		}
	}
	if s.nsInf != nil {
		checkers = append(checkers, regs[KindNamespace].HasSyncedChecker())
	}
	if cache.WaitFor(ctx, "", checkers...) {
		close(s.synced)
	}
}

// Synced returns a channel closed once every informer has listed (see
// HasSynced).
func (s *InformerSource) Synced() <-chan struct{} { return s.synced }

// HasSynced reports whether every informer has listed; with
// InformerOptions.CRDPollInterval, a kind the cluster did not serve when
// Run first asked counts as listed.
func (s *InformerSource) HasSynced() bool {
	p := s.regs.Load()
	if p == nil {
		return false // Run has not added its handlers
	}
	regs := *p
	for _, k := range s.crds {
		if !k.synced(s.poll > 0, regs[k.kind]) {
			return false
		}
	}
	return s.nsInf == nil || regs[KindNamespace].HasSynced()
}

// Unsynced returns the kinds whose informers have not delivered their
// initial lists to the source (every kind before Run): what its
// Controller's PendingSync names while the source holds the sync back.
// A kind the cluster does not serve counts as listed as HasSynced says.
// Safe for concurrent use.
func (s *InformerSource) Unsynced() []Kind {
	p := s.regs.Load()
	var out []Kind
	for _, k := range s.crds {
		if p == nil || !k.synced(s.poll > 0, (*p)[k.kind]) {
			out = append(out, k.kind)
		}
	}
	if s.nsInf != nil && (p == nil || !(*p)[KindNamespace].HasSynced()) {
		out = append(out, KindNamespace)
	}
	return out
}
