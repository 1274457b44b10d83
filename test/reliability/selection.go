package reliability

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
)

// AllSelected returns a copy of w in which every namespace that holds an
// object of a cluster exists in that cluster as a Namespace, and every
// Namespace carries SelectorLabel (a Namespace keeps its network label).
// A registry then reads the same objects with the harness's namespace
// selector as without one, and the world is what an API server could
// store: no object lives in a namespace that does not exist. Registries
// that take no namespace selector (Istio's, as the oracle runs it) read
// it as meshreg does.
func (w World) AllSelected() (World, error) {
	out := w.Clone()
	for _, c := range out.Clusters {
		namespaces := map[string]bool{}
		for _, key := range sortedKeys(out.Objects[c]) {
			kind, name, ns := cutKey(key)
			switch {
			case kind == "Namespace":
				s, err := namespaceSpecOf(name, out.Objects[c][key])
				if err != nil {
					return World{}, fmt.Errorf("cluster %s: %s: %w", c, key, err)
				}
				out.Set(c, key, s.YAML())
			case ns != "":
				namespaces[ns] = true
			}
		}
		for ns := range namespaces {
			s := NamespaceSpec{Name: ns, Selected: true}
			if _, ok := out.Objects[c][s.Key()]; !ok {
				out.Set(c, s.Key(), s.YAML())
			}
		}
	}
	return out, nil
}

// namespaceSpecOf returns the selected NamespaceSpec of a Namespace
// document, with the document's network label.
func namespaceSpecOf(name, doc string) (NamespaceSpec, error) {
	objs, err := decodeDocument(doc)
	if err != nil {
		return NamespaceSpec{}, err
	}
	s := NamespaceSpec{Name: name, Selected: true}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			return NamespaceSpec{}, err
		}
		s.Network = m.GetLabels()["topology.istio.io/network"]
	}
	return s, nil
}
