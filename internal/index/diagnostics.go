package index

import (
	"slices"
	"sync/atomic"

	"github.com/meshreg/meshreg/model"
)

// Diagnostics holds diagnostics by owner: a key of the writer's choosing,
// typically "Kind/namespace/name", whose list it replaces whole. The zero
// value is empty and ready to use.
type Diagnostics struct {
	byOwner map[string][]model.Diagnostic
	// view is every diagnostic sorted: built by Sorted, dropped by every
	// change.
	view atomic.Pointer[[]model.Diagnostic]
}

// Set replaces the diagnostics of owner with a copy of ds; an empty ds
// removes them.
func (x *Diagnostics) Set(owner string, ds []model.Diagnostic) {
	prev, had := x.byOwner[owner]
	if len(ds) == 0 {
		if !had {
			return
		}
		delete(x.byOwner, owner)
	} else {
		if slices.Equal(prev, ds) {
			return
		}
		if x.byOwner == nil {
			x.byOwner = map[string][]model.Diagnostic{}
		}
		x.byOwner[owner] = slices.Clone(ds)
	}
	x.view.Store(nil)
}

// Cached returns the view Sorted built, if no change has dropped it
// since, else nil. It needs no lock.
func (x *Diagnostics) Cached() []model.Diagnostic {
	if v := x.view.Load(); v != nil {
		return *v
	}
	return nil
}

// Sorted returns every diagnostic, sorted (model.SortDiagnostics), in a
// slice kept until the next change; never nil.
func (x *Diagnostics) Sorted() []model.Diagnostic {
	if v := x.view.Load(); v != nil {
		return *v
	}
	out := []model.Diagnostic{}
	for _, ds := range x.byOwner {
		out = append(out, ds...)
	}
	model.SortDiagnostics(out)
	x.view.Store(&out)
	return out
}
