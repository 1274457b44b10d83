package kube

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
)

// TestPortMapsShared checks that pods naming the same ports share one
// port map, that the map is what podPortMap gives, and that the table
// forgets a map with the last pod using it.
func TestPortMapsShared(t *testing.T) {
	withPorts := func(name, ip string, ports ...corev1.ContainerPort) *corev1.Pod {
		p := podObj("ns", name, ip, "", map[string]string{"app": "a"})
		p.Spec.Containers = []corev1.Container{{Name: "c", Ports: ports}}
		return p
	}
	http := corev1.ContainerPort{Name: "http", ContainerPort: 8080}
	grpc := corev1.ContainerPort{Name: "grpc", ContainerPort: 9090}
	f := newFakeCluster(
		withPorts("a", "10.0.0.1", http, grpc),
		withPorts("b", "10.0.0.2", http, grpc),
		withPorts("c", "10.0.0.3", http),
		withPorts("d", "10.0.0.4", corev1.ContainerPort{Name: "bad", ContainerPort: 70000}),
	)
	c := startController(t, f, Options{ClusterID: "c1"})
	byName := func() map[string]*model.WorkloadInstance {
		out := map[string]*model.WorkloadInstance{}
		for _, w := range c.Workloads() {
			out[w.Name] = w
		}
		return out
	}
	waitFor(t, "four workloads", func() bool { return len(byName()) == 4 })
	ws := byName()
	same := func(a, b map[string]uint32) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(ws["a"].PortMap, ws["b"].PortMap) {
		t.Error("pods naming the same ports hold different maps")
	}
	if same(ws["a"].PortMap, ws["c"].PortMap) {
		t.Error("pods naming different ports share a map")
	}
	if want := (map[string]uint32{"http": 8080, "grpc": 9090}); !reflect.DeepEqual(ws["a"].PortMap, want) {
		t.Errorf("port map = %v, want %v", ws["a"].PortMap, want)
	}
	if ws["d"].PortMap != nil {
		t.Errorf("port map of a pod without valid ports = %v, want nil", ws["d"].PortMap)
	}
	// The worker's table, read once its results are in the store (whose
	// lock orders the reads after its writes).
	refs := func() map[string]int {
		out := map[string]int{}
		for _, r := range c.portMaps.m {
			out[r.key] = r.refs
		}
		return out
	}
	if got := refs(); len(got) != 2 {
		t.Errorf("port map table holds %d maps, want 2: %v", len(got), got)
	}

	ctx := context.Background()
	for _, name := range []string{"a", "b", "c", "d"} {
		mustNot(t, f.CoreV1().Pods("ns").Delete(ctx, name, metav1.DeleteOptions{}))
	}
	waitFor(t, "workloads gone", func() bool { return len(byName()) == 0 })
	if got := refs(); len(got) != 0 {
		t.Errorf("port map table keeps %v after every pod was deleted", got)
	}
}

func TestPortsKeyUnambiguous(t *testing.T) {
	a := portsKey(nil, []namedPort{{name: "ab", port: 1}, {name: "c", port: 2}})
	b := portsKey(nil, []namedPort{{name: "a", port: 1}, {name: "bc", port: 2}})
	if string(a) == string(b) {
		t.Error("different port lists encode alike")
	}
}
