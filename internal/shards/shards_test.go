package shards

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/meshreg/meshreg/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMapAgainstBuiltin applies random operations to a Map and to a Go
// map and compares them after each.
func TestMapAgainstBuiltin(t *testing.T) {
	keys := []model.ShardKey{
		{Provider: model.Kubernetes, Cluster: "a"}, {Provider: model.Kubernetes, Cluster: "b"},
		{Provider: model.External, Cluster: "a"}, {Provider: model.External, Cluster: ""},
		{Provider: model.Kubernetes, Cluster: ""},
	}
	r := rand.New(rand.NewPCG(1, 2))
	var m Map[int]
	ref := map[model.ShardKey]int{}
	for i := range 2000 {
		k := keys[r.IntN(len(keys))]
		if r.IntN(3) == 0 {
			m.Delete(k)
			delete(ref, k)
		} else {
			m.Set(k, i)
			ref[k] = i
		}
		if m.Len() != len(ref) {
			t.Fatalf("step %d: Len %d, want %d", i, m.Len(), len(ref))
		}
		for _, k := range keys {
			got, ok := m.Get(k)
			want, wantOK := ref[k]
			if ok != wantOK || got != want || m.Has(k) != wantOK {
				t.Fatalf("step %d: Get(%v) = %d, %v; want %d, %v", i, k, got, ok, want, wantOK)
			}
		}
		var visited []model.ShardKey
		for k, v := range m.All() {
			if ref[k] != v {
				t.Fatalf("step %d: All gave %v=%d, want %d", i, k, v, ref[k])
			}
			visited = append(visited, k)
		}
		if !slices.IsSortedFunc(visited, model.ShardKey.Compare) || !slices.Equal(visited, m.Keys()) {
			t.Fatalf("step %d: entries not in shard order: %v", i, visited)
		}
	}
}
