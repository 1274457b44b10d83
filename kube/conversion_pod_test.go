package kube

import (
	"errors"
	"maps"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
)

func TestPodWorkload(t *testing.T) {
	env := podEnv{cluster: "c1", trustDomain: "td", node: model.Locality{Region: "r", Zone: "z"},
		network: networkEnv{ranges: newNetworkRanges(map[netip.Prefix]model.NetworkID{netip.MustParsePrefix("10.0.0.0/8"): "net-cidr"})}}
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "a", labelTLSMode: "istio"}},
			Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "sa", Containers: []corev1.Container{
				{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {ContainerPort: 9000}}},
				{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 1}, {Name: "admin", ContainerPort: 15000}}},
			}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "fd00::1", PodIPs: []corev1.PodIP{{IP: "fd00::1"}, {IP: "10.0.0.1"}},
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
	}
	tests := []struct {
		name    string
		mod     func(*corev1.Pod)
		want    func(*model.WorkloadInstance)
		wantErr error
	}{{
		name: "dual stack, node locality, CIDR network",
		mod:  func(*corev1.Pod) {},
		want: func(*model.WorkloadInstance) {},
	}, {
		name: "pod locality and network labels override",
		mod: func(p *corev1.Pod) {
			p.Labels[labelLocality] = "r2.z2.s2"
			p.Labels[labelNetwork] = "net-pod"
		},
		want: func(w *model.WorkloadInstance) {
			w.Endpoint.Locality = model.Locality{Region: "r2", Zone: "z2", Subzone: "s2"}
			w.Endpoint.Network = "net-pod"
			w.Endpoint.Labels = map[string]string{"app": "a", labelTLSMode: "istio", labelLocality: "r2.z2.s2",
				labelNetwork: "net-pod", labelCluster: "c1", labelRegion: "r2", labelZone: "z2", labelSubzone: "s2", labelHostname: "n1"}
		},
	}, {
		name: "not Ready: Unhealthy",
		mod:  func(p *corev1.Pod) { p.Status.Conditions = nil },
		want: func(w *model.WorkloadInstance) { w.Endpoint.Health, w.Endpoint.Serving = model.Unhealthy, false },
	}, {
		name: "being deleted: Unhealthy",
		mod:  func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now },
		want: func(w *model.WorkloadInstance) { w.Endpoint.Health, w.Endpoint.Serving = model.Unhealthy, false },
	}, {
		name: "host network, redirected, a Job's pod",
		mod: func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Annotations = map[string]string{model.AmbientRedirectionAnnotation: "enabled"}
			p.GenerateName = "backup-28391040-"
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "backup-28391040", Controller: ptr(true)}}
		},
		want: func(w *model.WorkloadInstance) { w.HostNetwork, w.Redirected, w.WorkloadName = true, true, "backup" },
	}, {
		name:    "no IP",
		mod:     func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "", nil },
		wantErr: errPodNoIP,
	}, {
		name:    "malformed IP only",
		mod:     func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "bogus", nil },
		wantErr: errPodNoIP,
	}, {
		name:    "terminal",
		mod:     func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
		wantErr: errPodTerminal,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := base()
			tt.mod(pod)
			got, err := podWorkload(newPodInfo(pod, nil), env)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || got != nil {
					t.Fatalf("podWorkload = %v, %v; want error %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := &model.WorkloadInstance{Kind: model.KindPod, Namespace: "ns", Name: "p", WorkloadName: "p",
				PortMap: map[string]uint32{"http": 8080, "admin": 15000},
				Endpoint: model.Endpoint{
					// The pod's order: IPv6 first, as its status lists them.
					Addresses: []netip.Addr{netip.MustParseAddr("fd00::1"), netip.MustParseAddr("10.0.0.1")},
					Labels: map[string]string{"app": "a", labelTLSMode: "istio", labelCluster: "c1", labelNetwork: "net-cidr",
						labelRegion: "r", labelZone: "z", labelHostname: "n1"},
					Locality: model.Locality{Region: "r", Zone: "z"}, Network: "net-cidr", Cluster: "c1",
					ServiceAccount: "spiffe://td/ns/ns/sa/sa", TLSMode: model.TLSIstio, NodeName: "n1", Serving: true,
					WorkloadKind: model.KindPod, WorkloadNamespace: "ns", WorkloadName: "p",
				}}
			tt.want(want)
			if !got.Equals(want) {
				t.Errorf("mismatch (-want +got):\n%s", cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })))
			}
		})
	}
}

func TestEndpointLabels(t *testing.T) {
	base := map[string]string{"app": "a", labelRegion: "stale"}
	got := endpointLabels(base, model.Locality{Zone: "z", Subzone: "s/rack"}, "", "node-1", "c1")
	want := map[string]string{"app": "a", labelRegion: "stale", labelZone: "z", labelSubzone: "s", labelHostname: "node-1", labelCluster: "c1"}
	if !maps.Equal(got, want) {
		t.Errorf("endpointLabels = %v, want %v", got, want)
	}
	if len(base) != 2 {
		t.Error("base modified")
	}
}

func TestAnonymousEndpoint(t *testing.T) {
	// The endpoint of no pod takes no locality from the node the slice
	// names, as in Istio.
	env := podEnv{cluster: "c1", node: model.Locality{Region: "r"}, network: networkEnv{cluster: "n"}}
	got := anonymousEndpoint([]netip.Addr{netip.MustParseAddr("1.1.1.1")}, "node", env)
	want := map[string]string{labelCluster: "c1", labelNetwork: "n"}
	if got.WorkloadName != "" || got.Network != "n" || !got.Locality.IsZero() || got.NodeName != "node" ||
		!maps.Equal(got.Labels, want) || got.ServiceAccount != "" || !got.Serving {
		t.Errorf("anonymousEndpoint = %+v", got)
	}
}

// FuzzPodWorkload checks that any pod converts without panicking, and
// that a workload has valid addresses, at most one per family.
func FuzzPodWorkload(f *testing.F) {
	f.Add("p", "ns", "10.0.0.1", "fd00::1", "Running", "sa", "r.z.s", "net", "http", int32(80))
	f.Add("", "", "", "", "Failed", "", "", "", "", int32(0))
	f.Add("p", "ns", "fd00::1", "10.0.0.1", "Pending", "sa", "a/b", "", "x", int32(70000))
	f.Add("p", "ns", "bogus", "::ffff:1.2.3.4", "", "", "...", "", "", int32(-5))
	f.Fuzz(func(t *testing.T, name, ns, ip1, ip2, phase, sa, loc, network, portName string, port int32) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{labelLocality: loc, labelNetwork: network}},
			Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: port}}}}},
			Status:     corev1.PodStatus{Phase: corev1.PodPhase(phase), PodIP: ip1, PodIPs: []corev1.PodIP{{IP: ip1}, {IP: ip2}}},
		}
		w, err := podWorkload(newPodInfo(pod, nil), podEnv{cluster: "c"})
		if err != nil {
			if w != nil {
				t.Fatal("workload with error")
			}
			return
		}
		as := w.Endpoint.Addresses
		if len(as) == 0 || len(as) > 2 {
			t.Fatalf("addresses %v", as)
		}
		if len(as) == 2 && as[0].Is4() == as[1].Is4() {
			t.Errorf("two addresses of one family: %v", as)
		}
		for _, n := range w.PortMap {
			if n < 1 || n > 65535 {
				t.Errorf("bad port %d", n)
			}
		}
	})
}
