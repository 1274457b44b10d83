package reliability

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
)

// World is the input of a registry: for each cluster, the objects its
// manifests hold, as YAML documents keyed by "Kind/namespace/name". The
// first cluster of Clusters is the config cluster, whose ServiceEntries are
// read; WorkloadEntries are read from every cluster.
type World struct {
	Clusters []model.ClusterID
	Objects  map[model.ClusterID]map[string]string
}

// NewWorld returns an empty world of the named clusters.
func NewWorld(clusters ...model.ClusterID) World {
	w := World{Clusters: slices.Clone(clusters), Objects: map[model.ClusterID]map[string]string{}}
	for _, c := range clusters {
		w.Objects[c] = map[string]string{}
	}
	return w
}

// Clone returns a deep copy of w.
func (w World) Clone() World {
	out := World{Clusters: slices.Clone(w.Clusters), Objects: map[model.ClusterID]map[string]string{}}
	for c, objs := range w.Objects {
		out.Objects[c] = maps.Clone(objs)
	}
	return out
}

// Set puts (or replaces) the object key in cluster c.
func (w World) Set(c model.ClusterID, key, yaml string) { w.Objects[c][key] = yaml }

// Delete removes the object key from cluster c.
func (w World) Delete(c model.ClusterID, key string) { delete(w.Objects[c], key) }

// YAML returns cluster c's objects as one multi-document manifest, in key
// order.
func (w World) YAML(c model.ClusterID) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(w.Objects[c])) {
		b.WriteString("---\n")
		b.WriteString(w.Objects[c][k])
		b.WriteString("\n")
	}
	return b.String()
}

// Decode returns cluster c's objects, in key order, each decoded by the
// manifest loader.
func (w World) Decode(c model.ClusterID) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, k := range slices.Sorted(maps.Keys(w.Objects[c])) {
		objs, err := decodeDocument(w.Objects[c][k])
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %s: %w", c, k, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// decoded caches decoded documents: the generator renders the same few
// documents over and over, and decoding dominates a sequence's cost.
var decoded sync.Map // string → []runtime.Object

// decodeDocument decodes one YAML document with the manifest loader, and
// returns copies the caller owns.
func decodeDocument(doc string) ([]runtime.Object, error) {
	v, ok := decoded.Load(doc)
	if !ok {
		objs, err := manifest.Load(strings.NewReader(doc))
		if err != nil {
			return nil, err
		}
		v, _ = decoded.LoadOrStore(doc, objs)
	}
	objs := v.([]runtime.Object)
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopyObject()
	}
	return out, nil
}

// Len returns the number of objects in every cluster together.
func (w World) Len() int {
	n := 0
	for _, objs := range w.Objects {
		n += len(objs)
	}
	return n
}
