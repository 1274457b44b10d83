package model_test

import (
	"slices"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// checkOrder checks that compare puts keys, listed in the order wanted,
// in that order: each pair compares as the positions of its keys do, in
// both directions, and equal keys compare 0.
func checkOrder[K any](t *testing.T, keys []K, compare func(a, b K) int) {
	t.Helper()
	sign := func(n int) int { return min(max(n, -1), 1) }
	for i, a := range keys {
		for j, b := range keys {
			want := sign(i - j)
			if got := compare(a, b); got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
	shuffled := slices.Clone(keys)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, compare)
	if !slices.EqualFunc(shuffled, keys, func(a, b K) bool { return compare(a, b) == 0 }) {
		t.Errorf("sorted: %v, want %v", shuffled, keys)
	}
}

// ServiceKeys sort by hostname, then namespace.
func TestServiceKeyCompare(t *testing.T) {
	checkOrder(t, []model.ServiceKey{
		{Namespace: "", Hostname: ""},
		{Namespace: "z", Hostname: "a.example.com"},
		{Namespace: "a", Hostname: "b.example.com"},
		{Namespace: "b", Hostname: "b.example.com"},
		{Namespace: "a", Hostname: "reviews.a.svc.cluster.local"},
		{Namespace: "a", Hostname: "reviews.b.svc.cluster.local"},
	}, model.ServiceKey.Compare)
}

// WorkloadKeys sort by cluster, kind (Pods first), namespace and name.
func TestWorkloadKeyCompare(t *testing.T) {
	checkOrder(t, []model.WorkloadKey{
		{Cluster: "", Kind: model.KindWorkloadEntry, Namespace: "z", Name: "z"},
		{Cluster: "a", Kind: model.KindPod, Namespace: "z", Name: "z"},
		{Cluster: "a", Kind: model.KindWorkloadEntry, Namespace: "a", Name: "a"},
		{Cluster: "a", Kind: model.KindWorkloadEntry, Namespace: "b", Name: "a"},
		{Cluster: "a", Kind: model.KindWorkloadEntry, Namespace: "b", Name: "b"},
		{Cluster: "b", Kind: model.KindPod, Namespace: "a", Name: "a"},
	}, model.WorkloadKey.Compare)
}

// ShardKeys sort by provider, Kubernetes first, then by cluster ID: the
// order the aggregate merges a service's versions in.
func TestShardKeyCompare(t *testing.T) {
	checkOrder(t, []model.ShardKey{
		{Provider: model.Kubernetes, Cluster: ""},
		{Provider: model.Kubernetes, Cluster: "a"},
		{Provider: model.Kubernetes, Cluster: "z"},
		{Provider: model.External, Cluster: ""},
		{Provider: model.External, Cluster: "a"},
	}, model.ShardKey.Compare)
}
