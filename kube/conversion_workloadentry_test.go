package kube

import (
	"net/netip"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// The rules of Istio's registry, checked with the oracle (hack/oracle).
func TestWorkloadEntryTargetPort(t *testing.T) {
	pm := map[string]uint32{"web": 8081, "grpc": 9191}
	tests := []struct {
		name   string
		port   model.Port
		ports  map[string]uint32
		want   uint32
		serves bool
	}{
		{"named, in port map", model.Port{Name: "http", Port: 80, TargetPortName: "web"}, pm, 8081, true},
		{"named, not in port map: not served", model.Port{Name: "http", Port: 80, TargetPortName: "other"}, pm, 0, false},
		{"named, no port map: not served", model.Port{Name: "http", Port: 80, TargetPortName: "web"}, nil, 0, false},
		{"numeric", model.Port{Name: "tcp", Port: 90, TargetPort: 9090}, pm, 9090, true},
		{"numeric, the entry's port of the service port's name wins", model.Port{Name: "grpc", Port: 90, TargetPort: 9090}, pm, 9191, true},
		{"unset: service port", model.Port{Name: "grpc", Port: 80}, pm, 80, true},
	}
	for _, tt := range tests {
		if got, serves := workloadEntryTargetPort(tt.port, tt.ports); got != tt.want || serves != tt.serves {
			t.Errorf("%s: got %d, %v; want %d, %v", tt.name, got, serves, tt.want, tt.serves)
		}
	}
}

func TestWorkloadEntrySelected(t *testing.T) {
	we := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "we",
		Endpoint: model.Endpoint{Labels: map[string]string{"app": "a"}, Addresses: []netip.Addr{netip.MustParseAddr("1.1.1.1")}}}
	tests := []struct {
		name string
		svc  *model.Service
		want bool
	}{
		{"match", &model.Service{Namespace: "ns", Selector: map[string]string{"app": "a"}}, true},
		{"headless", &model.Service{Namespace: "ns", Selector: map[string]string{"app": "a"}, Resolution: model.Passthrough}, false},
		{"mesh external", &model.Service{Namespace: "ns", Selector: map[string]string{"app": "a"}, MeshExternal: true}, false},
		{"other namespace", &model.Service{Namespace: "other", Selector: map[string]string{"app": "a"}}, false},
		{"no selector", &model.Service{Namespace: "ns"}, false},
		{"empty selector", &model.Service{Namespace: "ns", Selector: map[string]string{}}, false},
		{"mismatch", &model.Service{Namespace: "ns", Selector: map[string]string{"app": "b"}}, false},
	}
	for _, tt := range tests {
		if got := workloadEntrySelected(tt.svc, we); got != tt.want {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
	pod := *we
	pod.Kind = model.KindPod
	if workloadEntrySelected(tests[0].svc, &pod) {
		t.Error("a pod instance was selected as a WorkloadEntry")
	}
}

func TestWorkloadEntryEndpoints(t *testing.T) {
	svc := &model.Service{Ports: []model.Port{{Name: "http", Port: 80, TargetPortName: "web"}, {Name: "tcp", Port: 90, TargetPort: 9090}}}
	we := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "we", PortMap: map[string]uint32{"web": 8080},
		Endpoint: model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("1.1.1.1")}, Cluster: "other", Network: "n"}}
	got := workloadEntryEndpoints(svc, we, "c1")
	if len(got) != 2 || got[0].Port != 8080 || got[1].Port != 9090 || got[0].Cluster != "c1" ||
		got[0].Workload() != "ns/we" || got[0].WorkloadKind != model.KindWorkloadEntry || got[0].Network != "n" {
		t.Errorf("workloadEntryEndpoints = %+v", got)
	}
	if we.Endpoint.Cluster != "other" {
		t.Error("input modified")
	}
	// An entry reached through its network's gateway has no address.
	we.Endpoint.Addresses = nil
	if got := workloadEntryEndpoints(svc, we, "c1"); len(got) != 2 || len(got[0].Addresses) != 0 || got[0].Network != "n" {
		t.Errorf("address-less entry: endpoints %+v", got)
	}
	we.Endpoint.Hostname = "vm.example.com"
	if got := workloadEntryEndpoints(svc, we, "c1"); len(got) != 0 {
		t.Errorf("hostname entry gave endpoints: %v", got)
	}
	// A named targetPort the entry lacks: no endpoint for that port.
	we.Endpoint.Hostname = ""
	we.PortMap = nil
	if got := workloadEntryEndpoints(svc, we, "c1"); len(got) != 1 || got[0].ServicePortName != "tcp" {
		t.Errorf("entry without a port map: endpoints %+v", got)
	}
}

// FuzzWorkloadEntryEndpoints checks that any entry and port converts
// without panicking into endpoints of the right cluster and a valid port.
func FuzzWorkloadEntryEndpoints(f *testing.F) {
	f.Add("web", uint32(80), uint32(0), "web", uint32(8080), "1.1.1.1")
	f.Add("", uint32(80), uint32(90), "x", uint32(0), "fd00::1")
	f.Add("web", uint32(1), uint32(0), "web", uint32(0), "")
	f.Fuzz(func(t *testing.T, targetName string, port, target uint32, pmName string, pmPort uint32, addr string) {
		if port == 0 {
			port = 1
		}
		svc := &model.Service{Namespace: "ns", Ports: []model.Port{{Name: "p", Port: port, TargetPort: target, TargetPortName: targetName}}}
		we := &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Namespace: "ns", Name: "we", PortMap: map[string]uint32{pmName: pmPort}}
		if a, err := netip.ParseAddr(addr); err == nil {
			we.Endpoint.Addresses = []netip.Addr{a}
		}
		for _, ep := range workloadEntryEndpoints(svc, we, "c1") {
			if ep.Cluster != "c1" || ep.Port == 0 {
				t.Errorf("bad endpoint %+v", ep)
			}
		}
	})
}

func TestWorkloadEntryReachable(t *testing.T) {
	entry := func(cluster model.ClusterID, network model.NetworkID) *model.WorkloadInstance {
		return &model.WorkloadInstance{Kind: model.KindWorkloadEntry, Endpoint: model.Endpoint{Cluster: cluster, Network: network}}
	}
	for _, tc := range []struct {
		name      string
		we        *model.WorkloadInstance
		network   model.NetworkID
		reachable bool
	}{
		{"own cluster, other network", entry("c1", "net-b"), "net-a", true},
		{"other cluster, no network", entry("c2", ""), "net-a", true},
		{"other cluster, same network", entry("c2", "net-a"), "net-a", true},
		{"other cluster, other network", entry("c2", "net-b"), "net-a", false},
		{"cluster network unknown", entry("c2", "net-b"), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := workloadEntryReachable(tc.we, "c1", tc.network); got != tc.reachable {
				t.Errorf("reachable = %v, want %v", got, tc.reachable)
			}
		})
	}
}
