package aggregate

import (
	"maps"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/model"
)

// Istio's rule, case by case: which receiving registry a workload of each
// kind and cluster reaches.
func TestShareWithinCluster(t *testing.T) {
	kubeA := model.ShardKey{Provider: model.Kubernetes, Cluster: "a"}
	kubeB := model.ShardKey{Provider: model.Kubernetes, Cluster: "b"}
	seA := model.ShardKey{Provider: model.External, Cluster: "a"}
	seB := model.ShardKey{Provider: model.External, Cluster: "b"}
	wl := func(kind model.WorkloadKind, cluster model.ClusterID) *model.WorkloadInstance {
		return &model.WorkloadInstance{Kind: kind, Namespace: "ns", Name: "w", Endpoint: model.Endpoint{Cluster: cluster}}
	}
	for _, tc := range []struct {
		name string
		w    *model.WorkloadInstance
		to   model.ShardKey
		want bool
	}{
		{"a Pod reaches a ServiceEntry registry of its cluster", wl(model.KindPod, "a"), seA, true},
		{"a Pod reaches a ServiceEntry registry of another cluster", wl(model.KindPod, "b"), seA, true},
		{"a Pod is handed to kube registries, which ignore it", wl(model.KindPod, "b"), kubeA, true},
		{"a WorkloadEntry reaches its cluster's Services", wl(model.KindWorkloadEntry, "a"), kubeA, true},
		{"a remote WorkloadEntry reaches its cluster's Services", wl(model.KindWorkloadEntry, "b"), kubeB, true},
		{"a WorkloadEntry does not reach another cluster's Services", wl(model.KindWorkloadEntry, "a"), kubeB, false},
		{"a remote WorkloadEntry does not reach the config cluster's Services", wl(model.KindWorkloadEntry, "b"), kubeA, false},
		{"a remote WorkloadEntry reaches the config cluster's ServiceEntries", wl(model.KindWorkloadEntry, "b"), seA, true},
		{"a WorkloadEntry is handed to another cluster's ServiceEntry registry", wl(model.KindWorkloadEntry, "a"), seB, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShareWithinCluster(tc.w, tc.to); got != tc.want {
				t.Errorf("ShareWithinCluster(%s, %s) = %v, want %v", tc.w.Key(), tc.to, got, tc.want)
			}
			if !ShareAcrossClusters(tc.w, tc.to) {
				t.Errorf("ShareAcrossClusters(%s, %s) = false", tc.w.Key(), tc.to)
			}
		})
	}
}

// A remote cluster b's WorkloadEntry registry (provider External, cluster
// b) hands its entries to b's kube registry and to the config cluster a's
// ServiceEntry registry, and to nothing else; removing it withdraws them.
func TestRemoteWorkloadEntriesWiring(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kubeA := sinkRegistry{newFake(model.Kubernetes, "a")}
		kubeB := sinkRegistry{newFake(model.Kubernetes, "b")}
		kubeC := sinkRegistry{newFake(model.Kubernetes, "c")}
		seA := sinkRegistry{newFake(model.External, "a")}
		wesB := sinkRegistry{newFake(model.External, "b")}

		kubeA.workload(model.KindPod, "pod-a", "ns", "10.0.0.1", "")
		kubeB.workload(model.KindPod, "pod-b", "ns", "10.1.0.1", "")
		seA.workload(model.KindWorkloadEntry, "vm-a", "ns", "192.168.0.1", "")
		wesB.workload(model.KindWorkloadEntry, "vm-b", "ns", "192.168.1.1", "")

		agg, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []sinkRegistry{kubeA, kubeB, kubeC, seA} {
			_ = agg.Add(r)
		}
		stop := run(t, agg)
		defer stop()
		_ = agg.Add(wesB) // a remote cluster's entries added at run time
		synctest.Wait()

		check := func(s sinkRegistry, want ...string) {
			t.Helper()
			if got := slices.Sorted(maps.Keys(s.held())); !slices.Equal(got, want) {
				t.Errorf("%s holds %v, want %v", s.shard, got, want)
			}
		}
		check(kubeA, "a/WorkloadEntry/ns/vm-a", "b/Pod/ns/pod-b")
		check(kubeB, "a/Pod/ns/pod-a", "b/WorkloadEntry/ns/vm-b")
		check(kubeC, "a/Pod/ns/pod-a", "b/Pod/ns/pod-b")
		check(seA, "a/Pod/ns/pod-a", "b/Pod/ns/pod-b", "b/WorkloadEntry/ns/vm-b")
		// A WorkloadEntriesOnly registry is handed what any ServiceEntry
		// registry is, and ignores it all.
		check(wesB, "a/Pod/ns/pod-a", "a/WorkloadEntry/ns/vm-a", "b/Pod/ns/pod-b")

		// The remote cluster goes: its entries leave every sink.
		if err := agg.Remove(model.External, "b"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		check(kubeB, "a/Pod/ns/pod-a")
		check(seA, "a/Pod/ns/pod-a", "b/Pod/ns/pod-b")
	})
}
