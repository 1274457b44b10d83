package store_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// metaRecorder records the metadata events, and the network gateways
// and synced events that frame them in a replay.
type metaRecorder struct{ got []string }

func (r *metaRecorder) handler() registry.HandlerFuncs {
	return registry.HandlerFuncs{
		ClusterFunc: func(e registry.ClusterEvent) {
			r.got = append(r.got, fmt.Sprintf("%s cluster %s=%s initial=%v", e.Type, e.Cluster().ID, e.Cluster().Network, e.Initial))
		},
		NamespaceFunc: func(e registry.NamespaceEvent) {
			r.got = append(r.got, fmt.Sprintf("%s namespace %s/%s %v initial=%v", e.Type, e.Namespace().Cluster, e.Namespace().Name, e.Namespace().Labels, e.Initial))
		},
		GatewayFunc: func(e registry.GatewayEvent) {
			r.got = append(r.got, fmt.Sprintf("%s gateway %s/%s/%s initial=%v", e.Type, e.Gateway().Cluster, e.Gateway().Namespace, e.Gateway().Name, e.Initial))
		},
		NetworkGatewaysFunc: func(registry.NetworkGatewaysEvent) { r.got = append(r.got, "network gateways") },
		SyncedFunc:          func(registry.SyncedEvent) { r.got = append(r.got, "synced") },
	}
}

func (r *metaRecorder) expect(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(r.got, want) {
		t.Errorf("events:\n  %q\nwant\n  %q", r.got, want)
	}
	r.got = nil
}

// Clusters, namespaces and Gateways publish an event per change, none
// for a value equal to the one held, and a delete only for what is held.
func TestMetadataEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		rec := &metaRecorder{}
		defer s.Subscribe(rec.handler())()

		s.SetCluster(model.Cluster{ID: "c1", Network: "net1"})
		s.SetCluster(model.Cluster{ID: "c1", Network: "net1"})
		s.SetCluster(model.Cluster{ID: "c1", Network: "net2"})
		s.UpsertNamespace(&model.Namespace{Cluster: "c1", Name: "ns", Labels: map[string]string{"a": "1"}})
		s.UpsertNamespace(&model.Namespace{Cluster: "c1", Name: "ns", Labels: map[string]string{"a": "1"}})
		s.UpsertNamespace(&model.Namespace{Cluster: "c1", Name: "ns", Labels: map[string]string{"a": "2"}})
		gw := &model.Gateway{Cluster: "c1", Namespace: "ns", Name: "wp", Class: "istio-waypoint"}
		s.UpsertGateway(gw)
		same := *gw
		s.UpsertGateway(&same)
		moved := *gw
		moved.StatusAddresses = []model.GatewayAddress{{Type: model.IPAddressType, Value: "10.0.0.1"}}
		s.UpsertGateway(&moved)
		s.DeleteGateway(gw.Key())
		s.DeleteGateway(gw.Key())
		s.DeleteNamespace(model.NamespaceKey{Cluster: "c1", Name: "absent"})
		synctest.Wait()
		rec.expect(t,
			"add cluster c1=net1 initial=false", "update cluster c1=net2 initial=false",
			"add namespace c1/ns map[a:1] initial=false", "update namespace c1/ns map[a:2] initial=false",
			"add gateway c1/ns/wp initial=false", "update gateway c1/ns/wp initial=false", "delete gateway c1/ns/wp initial=false")
		if got := s.Clusters(); !slices.Equal(got, []model.Cluster{{ID: "c1", Network: "net2"}}) {
			t.Errorf("Clusters() = %v", got)
		}
	})
}

// A late subscriber is replayed the metadata after the network gateways
// and before the synced event, each kind sorted by key; DeleteMetadata
// withdraws a cluster's.
func TestMetadataReplayAndDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		for _, c := range []model.ClusterID{"c2", "c1"} {
			s.SetCluster(model.Cluster{ID: c, Network: "n-" + model.NetworkID(c)})
			s.UpsertNamespace(&model.Namespace{Cluster: c, Name: "b"})
			s.UpsertNamespace(&model.Namespace{Cluster: c, Name: "a"})
			s.UpsertGateway(&model.Gateway{Cluster: c, Namespace: "a", Name: "gw"})
		}
		s.SetNetworkGateways([]model.NetworkGateway{{Network: "n", Address: "1.1.1.1", Port: 15443}})
		s.MarkSynced()
		rec := &metaRecorder{}
		defer s.Subscribe(rec.handler())()
		synctest.Wait()
		rec.expect(t, "network gateways",
			"add cluster c1=n-c1 initial=true", "add cluster c2=n-c2 initial=true",
			"add namespace c1/a map[] initial=true", "add namespace c1/b map[] initial=true",
			"add namespace c2/a map[] initial=true", "add namespace c2/b map[] initial=true",
			"add gateway c1/a/gw initial=true", "add gateway c2/a/gw initial=true",
			"synced")

		s.DeleteMetadata("c2")
		synctest.Wait()
		rec.expect(t, "delete cluster c2=n-c2 initial=false",
			"delete namespace c2/a map[] initial=false", "delete namespace c2/b map[] initial=false",
			"delete gateway c2/a/gw initial=false")
		if got := len(s.Namespaces()); got != 2 {
			t.Errorf("%d namespaces left, want c1's 2", got)
		}
	})
}

// An endpoints event carries the service's endpoints of every visible
// shard (All), what Endpoints returns once the change is complete: for a
// shard's new list, a service's arrival (its shards released) and a
// change of provider (a shard withdrawn), and to a late subscriber.
func TestEndpointsEventsCarryAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.New()
		var last registry.EndpointsEvent
		n := 0
		defer s.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(e registry.EndpointsEvent) { last, n = e, n+1 }})()
		svc := kubeService("default", "reviews")
		key := svc.Key()
		c1, c2 := model.ShardKey{Provider: model.Kubernetes, Cluster: "c1"}, model.ShardKey{Provider: model.Kubernetes, Cluster: "c2"}
		// Before the service: held, not published; its arrival releases
		// both shards' lists, each event carrying both.
		s.SetEndpoints(c1, key, []*model.Endpoint{endpoint("10.0.0.1", 80)})
		s.SetEndpoints(c2, key, []*model.Endpoint{endpoint("10.0.0.2", 80)})
		s.UpsertService(svc)
		synctest.Wait()
		check := func(what string, wantEvents, wantAll int) {
			t.Helper()
			if n != wantEvents || len(last.All) != wantAll || !slices.Equal(last.All, s.Endpoints(key, registry.EndpointQuery{})) {
				t.Errorf("%s: %d events, last All %v; want %d events, All = Endpoints() of %d", what, n, last.All, wantEvents, wantAll)
			}
		}
		check("the service's arrival", 2, 2)
		s.SetEndpoints(c2, key, []*model.Endpoint{endpoint("10.0.0.2", 80), endpoint("10.0.0.3", 80)})
		synctest.Wait()
		check("a shard's new list", 3, 3)
		// The key becomes a ServiceEntry's: both Kubernetes shards are
		// withdrawn, each event carrying what is left: nothing.
		se := serviceEntry("default", "reviews", "reviews.default.svc.cluster.local", 1)
		s.UpsertService(se)
		synctest.Wait()
		check("the provider's change", 5, 0)

		late := []registry.EndpointsEvent{}
		s.UpsertService(svc)
		synctest.Wait()
		defer s.Subscribe(registry.HandlerFuncs{EndpointsFunc: func(e registry.EndpointsEvent) { late = append(late, e) }})()
		synctest.Wait()
		if len(late) != 2 || len(late[0].All) != 3 || len(late[1].All) != 3 {
			t.Errorf("replay: %d events, want 2 each with All of 3", len(late))
		}
	})
}
