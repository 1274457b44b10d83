package proxyview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

func TestClusterLocalHosts(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		local    []model.Hostname
		notLocal []model.Hostname
	}{
		{name: "defaults",
			local:    []model.Hostname{"kube-dns.kube-system.svc.cluster.local", "kubernetes.default.svc.cluster.local", "istiod.istio-system.svc.cluster.local"},
			notLocal: []model.Hostname{"reviews.default.svc.cluster.local", "kube-system.svc.cluster.local", "api.example.com"}},
		{name: "the domain suffix and discovery address", opts: Options{DomainSuffix: "corp.local", DiscoveryAddress: "cp.mesh.svc.corp.local:15012"},
			local:    []model.Hostname{"kube-dns.kube-system.svc.corp.local", "cp.mesh.svc.corp.local"},
			notLocal: []model.Hostname{"kube-dns.kube-system.svc.cluster.local", "istiod.istio-system.svc.corp.local"}},
		{name: "settings add hosts and wildcards",
			opts:  Options{ServiceSettings: []ServiceSetting{{ClusterLocal: true, Hosts: []string{"*.local-only.svc.cluster.local", "db.example.com"}}}},
			local: []model.Hostname{"a.local-only.svc.cluster.local", "db.example.com", "kube-dns.kube-system.svc.cluster.local"}},
		{name: "the most specific setting wins",
			opts: Options{ServiceSettings: []ServiceSetting{
				{ClusterLocal: true, Hosts: []string{"*"}},
				{ClusterLocal: false, Hosts: []string{"*.global.svc.cluster.local", "api.example.com"}},
			}},
			local:    []model.Hostname{"reviews.default.svc.cluster.local", "db.example.com"},
			notLocal: []model.Hostname{"a.global.svc.cluster.local", "api.example.com"}},
		{name: "a host under a default made not local removes that default",
			opts:     Options{ServiceSettings: []ServiceSetting{{ClusterLocal: false, Hosts: []string{"metrics.kube-system.svc.cluster.local"}}}},
			local:    []model.Hostname{"kubernetes.default.svc.cluster.local"},
			notLocal: []model.Hostname{"metrics.kube-system.svc.cluster.local", "kube-dns.kube-system.svc.cluster.local"}},
		{name: "a default named exactly",
			opts:     Options{ServiceSettings: []ServiceSetting{{ClusterLocal: false, Hosts: []string{"kubernetes.default.svc.cluster.local"}}}},
			local:    []model.Hostname{"kube-dns.kube-system.svc.cluster.local"},
			notLocal: []model.Hostname{"kubernetes.default.svc.cluster.local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFake().snapshot(t, tt.opts)
			for _, h := range tt.local {
				if !s.ClusterLocal(h) {
					t.Errorf("%s is not cluster-local, want it to be", h)
				}
			}
			for _, h := range tt.notLocal {
				if s.ClusterLocal(h) {
					t.Errorf("%s is cluster-local, want it not to be", h)
				}
			}
		})
	}
}

// TestClusterLocalEndpoints: a cluster-local service's endpoints reach
// only proxies of their own cluster, whatever the network.
func TestClusterLocalEndpoints(t *testing.T) {
	f := newFake()
	svc := f.add(kube("kube-dns", "kube-system"), ep("10.0.0.1", on("net1", "c1")), ep("10.1.0.1", on("net1", "c2")))
	other := f.add(kube("reviews", "default"), ep("10.0.0.2", on("net1", "c1")), ep("10.1.0.2", on("net1", "c2")))
	s := f.snapshot(t, Options{})
	p := &Proxy{Cluster: "c2", Network: "net1"}
	if diff := cmp.Diff([]string{" 10.1.0.1:8080 w1 Healthy"}, flat(s.Endpoints(p, svc.Key(), "http"))); diff != "" {
		t.Errorf("cluster-local endpoints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{" 10.0.0.2:8080 w1 Healthy", " 10.1.0.2:8080 w1 Healthy"}, flat(s.Endpoints(p, other.Key(), "http"))); diff != "" {
		t.Errorf("other endpoints (-want +got):\n%s", diff)
	}
}

func TestInvalidOptions(t *testing.T) {
	for _, o := range []Options{
		{DefaultServiceExportTo: []string{""}},
		{DefaultServiceExportTo: []string{"a,b"}},
		{DiscoveryAddress: "no-port"},
		{ServiceSettings: []ServiceSetting{{Hosts: []string{"a.*.com"}}}},
		{ServiceSettings: []ServiceSetting{{Hosts: []string{"*foo.com"}}}},
		{ServiceSettings: []ServiceSetting{{Hosts: []string{""}}}},
	} {
		if _, err := New(newFake(), o); err == nil {
			t.Errorf("New(%+v) = nil error", o)
		}
	}
}
