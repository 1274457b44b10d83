package index_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/internal/index"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func endpointAt(ip string, d model.Discoverability) *model.Endpoint {
	return &model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: 80, ServicePortName: "http", Cluster: "c1", Discoverability: d}
}

func TestRecast(t *testing.T) {
	always, same := model.AlwaysDiscoverable, model.DiscoverableFromSameCluster
	a, b, c := endpointAt("10.0.0.1", always), endpointAt("10.0.0.2", always), endpointAt("10.0.0.3", same)
	var r index.Recast

	src := []*model.Endpoint{a, b}
	if got := r.Apply(src, always); &got[0] != &src[0] {
		t.Error("a list whose endpoints all have the discoverability was copied")
	}

	first := r.Apply([]*model.Endpoint{a, b, c}, same)
	if len(first) != 3 || first[2] != c {
		t.Fatalf("recast %v: want the endpoint that has it kept as it is", first)
	}
	for i, ep := range first[:2] {
		if ep.Discoverability != same || ep == src[i] || ep.Address() != src[i].Address() {
			t.Errorf("endpoint %d = %+v, want a copy with %v", i, ep, same)
		}
	}
	if a.Discoverability != always {
		t.Error("the source endpoint was modified")
	}

	// b is replaced, a stays: a's copy is reused, b's new one made.
	b2 := endpointAt("10.0.0.2", always)
	b2.Weight = 3
	second := r.Apply([]*model.Endpoint{a, b2, c}, same)
	if second[0] != first[0] {
		t.Error("the copy of an unchanged endpoint was not reused")
	}
	if second[1] == first[1] || second[1].Weight != 3 {
		t.Errorf("a changed endpoint kept its old copy: %+v", second[1])
	}
	// Out of order (an endpoint removed before it): found all the same.
	third := r.Apply([]*model.Endpoint{b2}, same)
	if third[0] != second[1] {
		t.Error("the copy of an endpoint that moved was not reused")
	}
}

// One endpoint in two owners' lists (a Service and its ClusterSet host)
// is indexed once per owner; removing it from one leaves the other's.
// The ClusterSet host is no proxy target.
func TestEndpointsByIPSharedEndpoint(t *testing.T) {
	svc := &model.Service{Hostname: "a.ns.svc.cluster.local", Namespace: "ns", Name: "a", Provider: model.Kubernetes,
		Ports: []model.Port{{Name: "http", Port: 80}}}
	set := svc.DeepCopy()
	set.Hostname = model.ClusterSetHostname("a", "ns")
	ep := endpointAt("10.0.0.1", model.AlwaysDiscoverable)
	own := &index.Owner{Key: svc.Key(), Service: svc}
	other := &index.Owner{Key: set.Key(), Service: set}
	var x index.EndpointsByIP
	x.Add(own, []*model.Endpoint{ep})
	x.Add(other, []*model.Endpoint{ep})
	ip := netip.MustParseAddr("10.0.0.1")
	targets := func() []model.Hostname {
		var out []model.Hostname
		for _, t := range x.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{ip}}) {
			out = append(out, t.Service.Hostname)
		}
		return out
	}
	if got := targets(); !slices.Equal(got, []model.Hostname{svc.Hostname}) {
		t.Errorf("targets %v, want the Service alone", got)
	}
	x.Remove(other, []*model.Endpoint{ep})
	if got := targets(); !slices.Equal(got, []model.Hostname{svc.Hostname}) {
		t.Errorf("after the ClusterSet host's removal: targets %v, want the Service's still", got)
	}
	x.Add(other, []*model.Endpoint{ep})
	x.Remove(own, []*model.Endpoint{ep})
	if got := targets(); len(got) != 0 {
		t.Errorf("after the Service's removal: targets %v, want none", got)
	}
	// Replacing one owner's endpoint leaves the other's entry alone.
	x.Add(own, []*model.Endpoint{ep})
	ep2 := endpointAt("10.0.0.1", model.DiscoverableFromSameCluster)
	x.Replace(other, []*model.Endpoint{ep}, []*model.Endpoint{ep2})
	x.Remove(other, []*model.Endpoint{ep2})
	if got := targets(); !slices.Equal(got, []model.Hostname{svc.Hostname}) {
		t.Errorf("after replacing and removing the ClusterSet host's: targets %v, want the Service's", got)
	}
}
