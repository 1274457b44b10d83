package xds

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/proxyview"
	"github.com/meshreg/meshreg/registry/memory"
)

// kindLetters name the kinds in TestPushIsIncrementalPerNode's wants.
const kindLetters = "LRCE"

// TestPushIsIncrementalPerNode pushes one registry change at a time to two
// nodes, one in namespace ns-a on network net-a (which has no gateway),
// one in ns-b on net-b (which has one), and checks which kinds of each
// node got a new version: only those whose resources for that node
// changed.
func TestPushIsIncrementalPerNode(t *testing.T) {
	grpc := func(b *memory.ServiceBuilder) *model.Service { return b.Port("grpc", 8080).Build() }
	shared := grpc(memory.Service("shared", "ns-shared").ExportTo("ns-a", "ns-b"))
	onlyB := grpc(memory.Service("only-b", "ns-b").ExportTo("."))
	pub := grpc(memory.Service("pub", "ns-x"))
	pub2 := grpc(memory.Service("pub2", "ns-x"))
	api := grpc(memory.ServiceEntry("api.example.com", "ns-x").Resolution(model.ClientSideLB))
	apiA := grpc(memory.ServiceEntry("api.example.com", "ns-a").Resolution(model.ClientSideLB).ExportTo("."))
	on := func(network model.NetworkID, locality, ip string) *model.Endpoint {
		return memory.Endpoint(ip, 9000).Port("grpc").Network(network).Locality(locality).IstioTLS().Build()
	}
	gw := model.NetworkGateway{Network: "net-b", Address: "192.0.2.1", Port: 15443}

	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg.AddService(shared, onlyB, pub, api)
	reg.SetEndpoints(shared.Key(), on("net-a", "r1/z1", "10.1.0.1"), on("net-b", "r2/z2", "10.2.0.1"))
	reg.SetEndpoints(onlyB.Key(), on("net-b", "r2/z2", "10.2.0.2"))
	reg.SetEndpoints(pub.Key(), memory.Endpoint("10.3.0.1", 9000).Port("grpc").Build())
	reg.SetEndpoints(api.Key(), memory.Endpoint("10.4.0.1", 9000).Port("grpc").Build())
	reg.SetNetworkGateways(gw)

	view, err := proxyview.New(reg, proxyview.Options{SkipGatewayHostnames: true})
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan proxyview.Change, 100)
	defer view.Subscribe(func(c proxyview.Change) { changes <- c })()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{reg.Run, view.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); !view.HasSynced(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the view did not sync")
		}
	}

	n := newNodeSet(view, nil)
	for i, md := range []map[string]any{
		{MetadataNamespace: "ns-a", MetadataNetwork: "net-a", MetadataClusterID: "cluster-1"},
		{MetadataNamespace: "ns-b", MetadataNetwork: "net-b", MetadataClusterID: "cluster-1"},
	} {
		s, err := structpb.NewStruct(md)
		if err != nil {
			t.Fatal(err)
		}
		id := []string{"a", "b"}[i]
		if err := n.openStream(streamKey{id: int64(i)}, &corev3.Node{Id: id, Metadata: s}); err != nil {
			t.Fatalf("open %s: %v", id, err)
		}
	}
	versions := func(id string) (out [numKinds]int) {
		st, ok := n.Node(id)
		if !ok {
			t.Fatalf("node %s not registered", id)
		}
		for k, ts := range st.Types {
			out[k] = ts.Versions
		}
		return out
	}

	// waitFor drains the view's changes until one names key (or, for the
	// zero key, the gateways).
	waitFor := func(key model.ServiceKey) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case c := <-changes:
				for _, k := range c.Services {
					if k == key {
						return
					}
				}
				if key == (model.ServiceKey{}) && c.Gateways {
					return
				}
			case <-timeout:
				t.Fatalf("no change of %v came", key)
			}
		}
	}

	tests := []struct {
		name   string
		change func()
		key    model.ServiceKey // the service changed; zero for the gateways
		// deleted says the change deletes a service: its empty endpoints
		// and its deletion may come in two generations, and the push is
		// of the second.
		deleted bool
		// want is, per node, the kinds that get a new version (letters
		// of kindLetters).
		want map[string]string
	}{
		{
			name: "first push: full, but nothing new",
			want: map[string]string{"a": "", "b": ""},
		},
		{
			name:   "endpoints of a service only b sees",
			change: func() { reg.SetEndpoints(onlyB.Key(), on("net-b", "r2/z2", "10.2.0.3")) },
			key:    onlyB.Key(),
			want:   map[string]string{"a": "", "b": "E"},
		},
		{
			name: "an endpoint on a's network, which b cannot reach",
			change: func() {
				reg.SetEndpoints(shared.Key(), on("net-a", "r1/z1", "10.1.0.9"), on("net-b", "r2/z2", "10.2.0.1"))
			},
			key:  shared.Key(),
			want: map[string]string{"a": "E", "b": ""},
		},
		{
			name: "an endpoint on b's network: a's gateway weight changes",
			change: func() {
				reg.SetEndpoints(shared.Key(), on("net-a", "r1/z1", "10.1.0.9"), on("net-b", "r2/z2", "10.2.0.1"),
					on("net-b", "r2/z2", "10.2.0.4"))
			},
			key:  shared.Key(),
			want: map[string]string{"a": "E", "b": "E"},
		},
		{
			name: "a service's labels: no resource changes",
			change: func() {
				must(t, reg.UpdateService(pub.Key(), func(s *model.Service) { s.Labels = map[string]string{"team": "x"} }))
			},
			key:  pub.Key(),
			want: map[string]string{"a": "", "b": ""},
		},
		{
			name:   "a's namespace gets its own entry for a public host",
			change: func() { reg.AddService(apiA) }, // no endpoints: a's load assignment empties
			key:    apiA.Key(),
			want:   map[string]string{"a": "E", "b": ""},
		},
		{
			name:   "a new public service",
			change: func() { reg.AddService(pub2) },
			key:    pub2.Key(),
			want:   map[string]string{"a": "LRCE", "b": "LRCE"},
		},
		{
			name: "its exportTo narrowed to b's namespace",
			change: func() {
				must(t, reg.UpdateService(pub2.Key(), func(s *model.Service) { s.ExportTo = []string{"ns-b"} }))
			},
			key:  pub2.Key(),
			want: map[string]string{"a": "LRCE", "b": ""},
		},
		{
			name: "b's gateway moves: every service again, a's load assignment changes",
			change: func() {
				moved := gw
				moved.Port = 15444
				reg.SetNetworkGateways(moved)
			},
			want: map[string]string{"a": "E", "b": ""},
		},
		{
			name:    "a service b sees deleted",
			change:  func() { reg.DeleteService(onlyB.Key()) },
			key:     onlyB.Key(),
			deleted: true,
			want:    map[string]string{"a": "", "b": "LRCE"},
		},
	}
	for _, tt := range tests {
		before := map[string][numKinds]int{"a": versions("a"), "b": versions("b")}
		push := proxyview.Push{Changes: 1}
		if tt.change != nil {
			for len(changes) > 0 {
				<-changes // earlier changes, the initial state's among them
			}
			services := view.Snapshot().Len()
			tt.change()
			waitFor(tt.key)
			for tt.deleted && view.Snapshot().Len() != services-1 {
				waitFor(tt.key)
			}
			if tt.key == (model.ServiceKey{}) {
				push.Gateways = true
			} else {
				push.Services = []model.ServiceKey{tt.key}
			}
		}
		push.Snapshot = view.Snapshot()
		n.push(push)
		for id, want := range tt.want {
			after := versions(id)
			var got strings.Builder
			for k := range numKinds {
				switch after[k] - before[id][k] {
				case 0:
				case 1:
					got.WriteByte(kindLetters[k])
				default:
					t.Errorf("%s: node %s: %s got %d versions in one push", tt.name, id, typeURLs[k], after[k]-before[id][k])
				}
			}
			if got.String() != want {
				t.Errorf("%s: node %s: new versions for %q, want %q", tt.name, id, got.String(), want)
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
