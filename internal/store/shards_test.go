package store_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The aggregate's store holds many shards: these tests write to it as
// the aggregate does, several shards' lists of one service.

// shardEndpoint returns an endpoint of port "http" in the shard's
// cluster.
func shardEndpoint(shard model.ShardKey, ip string) *model.Endpoint {
	return &model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: 9080, ServicePortName: "http", Cluster: shard.Cluster,
	}
}

// A shard's endpoints belong to a service only while it comes from the
// shard's provider: a Kubernetes Service does not take a ServiceEntry's
// endpoints for its key, and a change of provider withdraws one
// provider's shards before the update and releases the other's after.
func TestShardVisibility(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, rec := newStore(t)
		kube := kubeService("default", "reviews")
		key := kube.Key()
		s.UpsertService(kube)
		s.SetEndpoints(kubeA, key, []*model.Endpoint{shardEndpoint(kubeA, "10.1.0.1")})
		s.SetEndpoints(seA, key, []*model.Endpoint{shardEndpoint(seA, "10.9.0.1")})
		synctest.Wait()
		rec.expect(t, "add service "+key.String(), "endpoints Kubernetes/a "+key.String()+" [http/10.1.0.1:9080]")
		if got := s.Endpoints(key, registry.EndpointQuery{}); len(got) != 1 || got[0].Address() != "10.1.0.1" {
			t.Errorf("Endpoints = %v, want only the Kubernetes shard's", got)
		}

		entry := *kube
		entry.Provider = model.External
		s.UpsertService(&entry)
		synctest.Wait()
		rec.expect(t,
			"endpoints Kubernetes/a "+key.String()+" []",
			"update service "+key.String(),
			"endpoints External/a "+key.String()+" [http/10.9.0.1:9080]")
		if got := s.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}); len(got) != 0 {
			t.Errorf("ProxyTargets through a hidden shard = %v", got)
		}
		if got := s.ProxyTargets(registry.ProxyQuery{IPs: []netip.Addr{netip.MustParseAddr("10.9.0.1")}}); len(got) != 1 {
			t.Errorf("ProxyTargets through the visible shard = %v, want one target", got)
		}

		// A hidden shard's list changes silently.
		s.SetEndpoints(kubeA, key, nil)
		s.SetEndpoints(seA, key, nil)
		synctest.Wait()
		rec.expect(t, "endpoints External/a "+key.String()+" []")
	})
}

// The lists of several visible shards merge into one list sorted by
// model.CompareEndpoints (port, cluster, address); one shard's list is
// answered as it is. Subscribers get each shard's list, not the union.
func TestMergesShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		svc := kubeService("default", "reviews")
		s.UpsertService(svc)
		a := []*model.Endpoint{shardEndpoint(kubeA, "10.1.0.1"), shardEndpoint(kubeA, "10.1.0.3")}
		s.SetEndpoints(kubeA, svc.Key(), a)
		if got := s.Endpoints(svc.Key(), registry.EndpointQuery{}); &got[0] != &a[0] {
			t.Error("one shard's list was not answered as it was given")
		}
		s.SetEndpoints(kubeB, svc.Key(), []*model.Endpoint{shardEndpoint(kubeB, "10.1.0.2"), shardEndpoint(kubeB, "10.1.0.0")})
		var got []string
		for _, ep := range s.Endpoints(svc.Key(), registry.EndpointQuery{}) {
			got = append(got, string(ep.Cluster)+"/"+ep.Address())
		}
		want := []string{"a/10.1.0.1", "a/10.1.0.3", "b/10.1.0.0", "b/10.1.0.2"}
		if !slices.Equal(got, want) {
			t.Errorf("Endpoints = %v, want %v", got, want)
		}
		if got := s.Endpoints(svc.Key(), registry.EndpointQuery{Cluster: "b"}); len(got) != 2 {
			t.Errorf("Endpoints of cluster b = %v, want two", got)
		}

		rec := &recorder{}
		defer s.Subscribe(rec)()
		synctest.Wait()
		rec.expect(t,
			"add service "+svc.Key().String(),
			"endpoints Kubernetes/a "+svc.Key().String()+" [http/10.1.0.1:9080 http/10.1.0.3:9080]",
			"endpoints Kubernetes/b "+svc.Key().String()+" [http/10.1.0.0:9080 http/10.1.0.2:9080]")

		// Removing one shard's list leaves the other's, as it was given.
		s.SetEndpoints(kubeB, svc.Key(), nil)
		if got := s.Endpoints(svc.Key(), registry.EndpointQuery{}); len(got) != 2 || &got[0] != &a[0] {
			t.Errorf("Endpoints after cluster b left = %v, want cluster a's list itself", got)
		}
	})
}

// ProxyTargets' cluster keeps a Kubernetes Service's endpoints of that
// cluster only (two clusters may reuse a pod IP), and a ServiceEntry's
// endpoints of every cluster.
func TestProxyTargetsCluster(t *testing.T) {
	s := store.New()
	svc := kubeService("default", "reviews")
	entry := serviceEntry("default", "vm", "vm.example.com", 1)
	s.UpsertService(svc)
	s.UpsertService(entry)
	s.SetEndpoints(kubeA, svc.Key(), []*model.Endpoint{shardEndpoint(kubeA, "10.1.0.1")})
	inB := shardEndpoint(kubeB, "10.1.0.1")
	inB.Port = 9081 // tells cluster b's target from cluster a's
	s.SetEndpoints(kubeB, svc.Key(), []*model.Endpoint{inB})
	vm := shardEndpoint(seA, "10.1.0.1")
	vm.Port = 80
	s.SetEndpoints(seA, entry.Key(), []*model.Endpoint{vm})

	ip := []netip.Addr{netip.MustParseAddr("10.1.0.1")}
	const (
		fromA  = "reviews.default.svc.cluster.local:9080->9080"
		fromB  = "reviews.default.svc.cluster.local:9080->9081"
		fromVM = "vm.example.com:80->80"
	)
	for _, tt := range []struct {
		cluster model.ClusterID
		want    []string
	}{
		{"", []string{fromA, fromB, fromVM}},
		{"a", []string{fromA, fromVM}},
		{"b", []string{fromB, fromVM}},
		{"c", []string{fromVM}},
	} {
		var got []string
		for _, tg := range s.ProxyTargets(registry.ProxyQuery{IPs: ip, Cluster: tt.cluster}) {
			got = append(got, fmt.Sprintf("%s:%d->%d", tg.Service.Hostname, tg.Port.Port, tg.TargetPort))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("cluster %q: targets %q, want %q", tt.cluster, got, tt.want)
		}
	}
}
