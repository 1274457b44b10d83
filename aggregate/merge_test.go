package aggregate

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The merger hands the store only the endpoints of ports the merged
// service has, and reads again only the endpoints that are new to a
// shard's list (pushEndpoints): each step below is one member event, and
// after each the store must hold exactly the endpoints named, whatever
// the lists before it shared with the new one.
func TestMergerKeepsEndpointsOfMergedPortsOnly(t *testing.T) {
	a := model.ShardKey{Provider: model.Kubernetes, Cluster: "cluster-a"}
	b := model.ShardKey{Provider: model.Kubernetes, Cluster: "cluster-b"}
	key := model.ServiceKey{Hostname: "reviews.default.svc.cluster.local", Namespace: "default"}

	// A step names endpoints "cluster/port@ip". Each name stands for one
	// endpoint, made at its first use and reused after, so that lists
	// share endpoints as a registry's successive lists do; a name marked
	// "!" is a new endpoint in the old one's place (a health flip).
	type step struct {
		shard model.ShardKey
		ports []model.Port // a service event with these ports, or
		eps   []string     // an endpoints event with these endpoints
		want  []string     // the store's endpoints afterwards
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a kept list with a new endpoint of an unknown port", []step{
			{shard: a, ports: []model.Port{httpPort}},
			{shard: a, eps: []string{"http@10.0.0.1", "http@10.0.0.2"}, want: []string{"cluster-a/http@10.0.0.1", "cluster-a/http@10.0.0.2"}},
			// Index 0 is shared with the kept list; index 1 is new, of a
			// port the service lacks.
			{shard: a, eps: []string{"http@10.0.0.1", "xtra@10.0.0.9"}, want: []string{"cluster-a/http@10.0.0.1"}},
		}},
		{"a kept list shifted by an endpoint added and one removed", []step{
			{shard: a, ports: []model.Port{httpPort}},
			{shard: a, eps: []string{"http@10.0.0.2", "http@10.0.0.3", "http@10.0.0.4"},
				want: []string{"cluster-a/http@10.0.0.2", "cluster-a/http@10.0.0.3", "cluster-a/http@10.0.0.4"}},
			// The kept endpoints move one place on, then back: they are
			// the old list's, at other indexes. The new endpoints are of
			// a port the service lacks.
			{shard: a, eps: []string{"http@10.0.0.1", "http@10.0.0.2", "http@10.0.0.3", "http@10.0.0.4", "xtra@10.0.0.9"},
				want: []string{"cluster-a/http@10.0.0.1", "cluster-a/http@10.0.0.2", "cluster-a/http@10.0.0.3", "cluster-a/http@10.0.0.4"}},
			{shard: a, eps: []string{"http@10.0.0.1", "http@10.0.0.3", "http@10.0.0.4", "xtra@10.0.0.8"},
				want: []string{"cluster-a/http@10.0.0.1", "cluster-a/http@10.0.0.3", "cluster-a/http@10.0.0.4"}},
		}},
		{"a filtered list patched in place stays filtered", []step{
			{shard: a, ports: []model.Port{httpPort}},
			{shard: b, ports: []model.Port{grpcPort, httpPort}}, // merged: cluster-a's ports
			{shard: b, eps: []string{"grpc@10.1.0.1", "grpc@10.1.0.2", "http@10.1.0.1", "http@10.1.0.2"},
				want: []string{"cluster-b/http@10.1.0.1", "cluster-b/http@10.1.0.2"}},
			{shard: b, eps: []string{"grpc@10.1.0.1", "grpc@10.1.0.2", "http@10.1.0.1", "!http@10.1.0.2"},
				want: []string{"cluster-b/http@10.1.0.1", "cluster-b/http@10.1.0.2"}},
		}},
		{"the merged ports shrink, then a list shares the dropped port's endpoints", []step{
			{shard: a, ports: []model.Port{grpcPort, httpPort}},
			{shard: a, eps: []string{"grpc@10.0.0.1", "http@10.0.0.1"}, want: []string{"cluster-a/grpc@10.0.0.1", "cluster-a/http@10.0.0.1"}},
			{shard: a, ports: []model.Port{httpPort}, want: []string{"cluster-a/http@10.0.0.1"}},
			{shard: a, eps: []string{"grpc@10.0.0.1", "!http@10.0.0.1"}, want: []string{"cluster-a/http@10.0.0.1"}},
		}},
		{"endpoints before their service", []step{
			{shard: a, eps: []string{"grpc@10.0.0.1", "http@10.0.0.1"}}, // held back: no service
			{shard: a, ports: []model.Port{httpPort}, want: []string{"cluster-a/http@10.0.0.1"}},
			{shard: a, eps: []string{"grpc@10.0.0.1", "!http@10.0.0.1"}, want: []string{"cluster-a/http@10.0.0.1"}},
			{shard: a, ports: []model.Port{grpcPort, httpPort}, want: []string{"cluster-a/grpc@10.0.0.1", "cluster-a/http@10.0.0.1"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := map[string]*model.Endpoint{}
			endpoint := func(shard model.ShardKey, name string) *model.Endpoint {
				name, renew := strings.CutPrefix(name, "!")
				id := string(shard.Cluster) + "/" + name
				if e := pool[id]; e != nil && !renew {
					return e
				}
				port, ip, _ := strings.Cut(name, "@")
				e := &model.Endpoint{ServicePortName: port, Cluster: shard.Cluster, Addresses: []netip.Addr{netip.MustParseAddr(ip)}}
				if renew {
					e.Health = pool[id].Health ^ 1
				}
				pool[id] = e
				return e
			}
			m := newMerger(nil)
			m.mu.Lock()
			defer m.mu.Unlock()
			for i, s := range tt.steps {
				if s.ports != nil {
					m.apply(s.shard, registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{
						Hostname: key.Hostname, Namespace: key.Namespace, Name: "reviews", Provider: model.Kubernetes, Ports: s.ports,
					}})
				} else {
					var es []*model.Endpoint
					for _, n := range s.eps {
						es = append(es, endpoint(s.shard, n))
					}
					slices.SortFunc(es, model.CompareEndpoints)
					m.apply(s.shard, registry.EndpointsEvent{Shard: s.shard, Service: key, Endpoints: es})
				}
				var want []*model.Endpoint
				for _, id := range s.want {
					want = append(want, pool[id])
				}
				if got := m.st.Endpoints(key, registry.EndpointQuery{}); !slices.Equal(got, want) {
					t.Fatalf("step %d: store holds %v, want %v", i, describe(got), describe(want))
				}
			}
		})
	}
}

func describe(es []*model.Endpoint) []string {
	var out []string
	for _, e := range es {
		if e == nil {
			out = append(out, "<nil>")
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s@%s(%v)", e.Cluster, e.ServicePortName, e.Addresses[0], e.Health))
	}
	return out
}
