package serviceentry

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// nsFilter decides whose namespaces' objects a Controller uses
// (Options.NamespaceSelector). Only the controller's worker uses it.
//
// A namespace's decision is taken once and kept until the namespace's own
// event re-decides it, so that every object of a namespace is applied
// under the same decision: an object's event that comes before its
// namespace's (whose labels the source may already show changed) does not
// split the namespace, and the namespace's event then brings all its
// objects in or takes them all out.
type nsFilter struct {
	// sel is nil for every namespace.
	sel labels.Selector
	src NamespaceSource
	// decided holds each namespace's decision, false ones too (a
	// namespace forgotten would be decided afresh by the next object's
	// event, before its own event came): one entry per namespace seen.
	decided map[string]bool
}

// newNSFilter returns the filter of a selector over src's namespaces: nil
// selects every namespace, even one that does not exist; any other
// selector (even an empty one) only namespaces that exist, with labels it
// matches. A selector needs a NamespaceSource that holds namespaces.
func newNSFilter(selector *metav1.LabelSelector, src Source) (*nsFilter, error) {
	if selector == nil {
		return &nsFilter{}, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("serviceentry: invalid NamespaceSelector: %w", err)
	}
	nss, ok := src.(NamespaceSource)
	if aware, isAware := src.(namespaceAware); !ok || isAware && !aware.watchesNamespaces() {
		return nil, errors.New("serviceentry: a NamespaceSelector needs a Source that holds namespaces (a NamespaceSource; an InformerSource with InformerOptions.Namespaces)")
	}
	return &nsFilter{sel: sel, src: nss, decided: map[string]bool{}}, nil
}

// selected reports whether the objects of a namespace are used.
func (f *nsFilter) selected(ns string) bool {
	if f.sel == nil {
		return true
	}
	d, ok := f.decided[ns]
	if !ok {
		d = f.decide(ns)
		f.decided[ns] = d
	}
	return d
}

// redecide takes a namespace's decision again, after its change, and
// reports whether it changed.
func (f *nsFilter) redecide(ns string) bool {
	if f.sel == nil {
		return false
	}
	d, old := f.decide(ns), f.selected(ns)
	f.decided[ns] = d
	return d != old
}

func (f *nsFilter) decide(ns string) bool {
	l, ok := f.src.NamespaceLabels(ns)
	return ok && f.sel.Matches(labels.Set(l))
}

// namespaceTraffic returns a namespace's traffic distribution annotation,
// from a source that knows it (StaticSource; InformerSource with
// InformerOptions.Namespaces), and records it as used.
func (c *Controller) namespaceTraffic(ns string) string {
	src, ok := c.src.(interface{ NamespaceTrafficDistribution(string) string })
	if !ok {
		return ""
	}
	return src.NamespaceTrafficDistribution(ns)
}

// namespaceView returns what a namespace's entries are converted with
// (its traffic distribution annotation, the visibility
// Options.Visibility gives them by its labels) and records it as used.
func (c *Controller) namespaceView(ns string) nsView {
	v := nsView{traffic: c.namespaceTraffic(ns)}
	if c.opts.Visibility != nil {
		var labels map[string]string
		if src, ok := c.src.(NamespaceSource); ok {
			labels, _ = src.NamespaceLabels(ns)
		}
		v.visibility = c.opts.Visibility.For(labels)
	}
	if v == (nsView{}) {
		delete(c.nsViews, ns)
	} else {
		c.nsViews[ns] = v
	}
	return v
}
