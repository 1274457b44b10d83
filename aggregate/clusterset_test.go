package aggregate

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/internal/shards"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// mcsWorld is the member events of a ClusterSet scenario: reviews in
// clusters a and b and c, exported in a and c, imported (with VIPs) in a,
// b and d, which has no Service; c imports nothing. Each event replaces
// one member's state of one service, so any order must end in the same
// merged state.
func mcsWorld() []mcsEvent {
	svc := func(cluster model.ClusterID, exported bool, ports ...model.Port) *model.Service {
		s := &model.Service{Hostname: "reviews.default.svc.cluster.local", Namespace: "default", Name: "reviews",
			Provider: model.Kubernetes, Ports: ports, ExportTo: []string{"."},
			Addresses: map[model.ClusterID][]netip.Prefix{cluster: {netip.MustParsePrefix("10.96.0.1/32")}}}
		if exported {
			s.Exports = map[model.ClusterID]time.Time{cluster: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
		}
		return s
	}
	set := func(cluster model.ClusterID, vip string) *model.Service {
		return &model.Service{Hostname: model.ClusterSetHostname("reviews", "default"), Namespace: "default", Name: "reviews",
			Provider: model.Kubernetes, Ports: []model.Port{{Name: "http", Port: 80, Protocol: model.TCP}}, // an import's stub
			Addresses: map[model.ClusterID][]netip.Prefix{cluster: {netip.MustParsePrefix(vip)}}}
	}
	ep := func(cluster model.ClusterID, ip string, d model.Discoverability) *model.Endpoint {
		return &model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: 8080, ServicePortName: "http",
			Cluster: cluster, Discoverability: d}
	}
	always, same := model.AlwaysDiscoverable, model.DiscoverableFromSameCluster
	ea, eb, ec := ep("a", "10.0.0.1", always), ep("b", "10.1.0.1", same), ep("c", "10.2.0.1", always)
	return []mcsEvent{
		{cluster: "a", svc: svc("a", true, httpPort)},
		{cluster: "a", key: baseKey, eps: []*model.Endpoint{ea}},
		{cluster: "a", svc: set("a", "242.0.0.1/32")},
		{cluster: "a", key: setKey, eps: []*model.Endpoint{ea}},
		{cluster: "b", svc: svc("b", false, httpPort)},
		{cluster: "b", key: baseKey, eps: []*model.Endpoint{eb}},
		{cluster: "b", svc: set("b", "242.0.0.2/32")},
		{cluster: "b", key: setKey, eps: []*model.Endpoint{eb}},
		{cluster: "c", svc: svc("c", true, httpPort)},
		{cluster: "c", key: baseKey, eps: []*model.Endpoint{ec}},
		{cluster: "d", svc: set("d", "242.0.0.4/32")},
	}
}

var (
	baseKey = model.ServiceKey{Namespace: "default", Hostname: "reviews.default.svc.cluster.local"}
	setKey  = model.ServiceKey{Namespace: "default", Hostname: model.ClusterSetHostname("reviews", "default")}
)

// mcsEvent is one member event: a service (svc set) or the endpoints of
// key.
type mcsEvent struct {
	cluster model.ClusterID
	svc     *model.Service
	key     model.ServiceKey
	eps     []*model.Endpoint
}

func (e mcsEvent) apply(m *merger) {
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: e.cluster}
	if e.svc != nil {
		m.apply(shard, registry.ServiceEvent{Type: model.EventAdd, Current: e.svc})
		return
	}
	m.apply(shard, registry.EndpointsEvent{Shard: shard, Service: e.key, Endpoints: e.eps})
}

func (e mcsEvent) undo(m *merger) {
	shard := model.ShardKey{Provider: model.Kubernetes, Cluster: e.cluster}
	if e.svc != nil {
		m.apply(shard, registry.ServiceEvent{Type: model.EventDelete, Previous: e.svc})
		return
	}
	m.apply(shard, registry.EndpointsEvent{Shard: shard, Service: e.key})
}

func mergedDump(t *testing.T, m *merger) string {
	t.Helper()
	var buf bytes.Buffer
	if err := registry.WriteJSON(&buf, m.st); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The ClusterSet host is the merged Service's copy under its name, with
// every importing cluster's VIPs; its endpoints are every cluster's, an
// importing cluster's as it gives them, a cluster's that does not import
// it discoverable from that cluster alone; whatever the order.
func TestClusterSetMerge(t *testing.T) {
	world := mcsWorld()
	m := newMerger(nil)
	m.mu.Lock()
	for _, e := range world {
		e.apply(m)
	}
	m.mu.Unlock()

	set := m.st.ServiceByKey(setKey)
	if set == nil {
		t.Fatal("no ClusterSet host")
	}
	want := m.st.ServiceByKey(baseKey).DeepCopy()
	want.Hostname = setKey.Hostname
	want.Addresses = map[model.ClusterID][]netip.Prefix{
		"a": {netip.MustParsePrefix("242.0.0.1/32")}, "b": {netip.MustParsePrefix("242.0.0.2/32")}, "d": {netip.MustParsePrefix("242.0.0.4/32")}}
	if !set.Equals(want) {
		t.Errorf("ClusterSet host %+v\nwant the merged Service's copy with the imports' VIPs %+v", set, want)
	}
	if len(set.Exports) != 2 || !slices.Equal(set.ExportTo, []string{"."}) {
		t.Errorf("ClusterSet host exports %v exportTo %v, want the Service's", set.Exports, set.ExportTo)
	}
	var got []string
	for _, ep := range m.st.Endpoints(setKey, registry.EndpointQuery{}) {
		got = append(got, string(ep.Cluster)+" "+ep.Address()+" "+ep.Discoverability.String())
	}
	if diff := cmp.Diff([]string{
		"a 10.0.0.1 AlwaysDiscoverable",
		"b 10.1.0.1 DiscoverableFromSameCluster",
		"c 10.2.0.1 DiscoverableFromSameCluster", // c exports, but does not import
	}, got); diff != "" {
		t.Errorf("ClusterSet endpoints (-want +got):\n%s", diff)
	}
	if eps := m.st.Endpoints(baseKey, registry.EndpointQuery{}); len(eps) != 3 || eps[2].Discoverability != model.AlwaysDiscoverable {
		t.Errorf("the Service's endpoints were changed: %v", describe(eps))
	}

	final := mergedDump(t, m)
	rng := rand.New(rand.NewPCG(32, 1))
	for range 200 {
		order := slices.Clone(world)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		m := newMerger(nil)
		m.mu.Lock()
		for _, e := range order {
			e.apply(m)
		}
		got := mergedDump(t, m)
		m.mu.Unlock()
		if got != final {
			t.Fatalf("order %v gives another state (-want +got):\n%s", order, cmp.Diff(final, got))
		}
	}
}

// Removing what the ClusterSet host rests on takes it apart, in any
// order, to what a merger that never saw the removed objects holds.
func TestClusterSetRemovals(t *testing.T) {
	world := mcsWorld()
	rng := rand.New(rand.NewPCG(32, 2))
	for range 100 {
		drop := rng.Perm(len(world))[:1+rng.IntN(len(world)-1)]
		var kept []mcsEvent
		for i, e := range world {
			if !slices.Contains(drop, i) {
				kept = append(kept, e)
			}
		}
		fresh := newMerger(nil)
		fresh.mu.Lock()
		for _, e := range kept {
			e.apply(fresh)
		}
		want := mergedDump(t, fresh)
		fresh.mu.Unlock()

		m := newMerger(nil)
		m.mu.Lock()
		order := slices.Clone(world)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, e := range order {
			e.apply(m)
		}
		for _, i := range drop {
			world[i].undo(m)
		}
		got := mergedDump(t, m)
		m.mu.Unlock()
		if got != want {
			t.Fatalf("removing events %v: (-want +got):\n%s", drop, cmp.Diff(want, got))
		}
	}
}

// Without a Service in any cluster an import gives no ClusterSet host
// (Istio creates none), and says so; a ServiceEntry of the host's name
// is then the service.
func TestClusterSetWithoutService(t *testing.T) {
	m := newMerger(nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range mcsWorld() {
		if e.cluster == "d" {
			e.apply(m)
		}
	}
	if m.st.ServiceByKey(setKey) != nil {
		t.Error("a ClusterSet host without a Service")
	}
	ds := m.st.Diagnostics()
	if len(ds) != 1 || ds[0].Kind != "ServiceImport" || !strings.Contains(ds[0].Message, "no cluster has the Service") {
		t.Errorf("diagnostics %v, want one for the import", ds)
	}
	ext := model.ShardKey{Provider: model.External, Cluster: "a"}
	m.apply(ext, registry.ServiceEvent{Type: model.EventAdd, Current: &model.Service{
		Hostname: setKey.Hostname, Namespace: "default", Name: "entry", Provider: model.External, Ports: []model.Port{httpPort}}})
	if svc := m.st.ServiceByKey(setKey); svc == nil || svc.Provider != model.External {
		t.Errorf("ClusterSet name's ServiceEntry: %+v, want it the service", svc)
	}
	for _, e := range mcsWorld() {
		e.apply(m)
	}
	if svc := m.st.ServiceByKey(setKey); svc == nil || svc.Provider != model.Kubernetes {
		t.Errorf("with the Service: %+v, want the ClusterSet host, which beats the entry", svc)
	}
}

func TestExportConflicts(t *testing.T) {
	at := func(minute int) time.Time { return time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC) }
	svc := func(cluster model.ClusterID, minute int, res model.Resolution, ports ...model.Port) *model.Service {
		s := &model.Service{Hostname: baseKey.Hostname, Namespace: "default", Name: "reviews", Provider: model.Kubernetes,
			Resolution: res, Ports: ports}
		if minute >= 0 {
			s.Exports = map[model.ClusterID]time.Time{cluster: at(minute)}
		}
		return s
	}
	http81 := model.Port{Name: "http", Port: 81, Protocol: model.HTTP}
	tcp80 := model.Port{Name: "http", Port: 80, Protocol: model.TCP}
	tests := []struct {
		name  string
		svcs  map[model.ClusterID]*model.Service
		wants map[model.ClusterID]string // cluster → what its diagnostic says
	}{
		{"agreeing exports", map[model.ClusterID]*model.Service{
			"a": svc("a", 1, model.ClientSideLB, httpPort), "b": svc("b", 0, model.ClientSideLB, httpPort, grpcPort)}, nil},
		{"one export: no conflict", map[model.ClusterID]*model.Service{
			"a": svc("a", 1, model.ClientSideLB, httpPort), "b": svc("b", -1, model.ClientSideLB, http81)}, nil},
		{"the oldest export wins a port", map[model.ClusterID]*model.Service{
			"a": svc("a", 5, model.ClientSideLB, httpPort), "b": svc("b", 2, model.ClientSideLB, http81), "c": svc("c", 9, model.ClientSideLB, tcp80)},
			map[model.ClusterID]string{"a": `port "http" 80/HTTP (81/HTTP)`, "c": `port "http" 80/TCP (81/HTTP)`}},
		{"type", map[model.ClusterID]*model.Service{
			"a": svc("a", 0, model.ClientSideLB, httpPort), "b": svc("b", 0, model.Passthrough, httpPort)}, // a tie: by cluster ID
			map[model.ClusterID]string{"b": "type Headless (ClusterSetIP)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var byShard shards.Map[*model.Service]
			for c, s := range tt.svcs {
				byShard.Set(model.ShardKey{Provider: model.Kubernetes, Cluster: c}, s)
			}
			got := map[model.ClusterID]string{}
			for _, d := range exportConflicts(byShard) {
				if d.Kind != "ServiceExport" || d.Name != "reviews" {
					t.Errorf("diagnostic %+v, want one of the ServiceExport", d)
				}
				got[d.Cluster] = d.Message
			}
			if len(got) != len(tt.wants) {
				t.Fatalf("conflicts %v, want for %v", got, tt.wants)
			}
			for c, want := range tt.wants {
				if !strings.Contains(got[c], want) {
					t.Errorf("cluster %s: %q, want it to say %q", c, got[c], want)
				}
			}
		})
	}
}
