package aggregate

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// fakeRegistry is a store-backed registry for the aggregate's tests. It
// syncs when Run starts unless holdSync is set, counts its subscriptions,
// and records the workload events the aggregate hands it when sink is
// set.
type fakeRegistry struct {
	registry.Reader
	st       *store.Store
	shard    model.ShardKey
	holdSync bool

	running     atomic.Bool
	subscribers atomic.Int64
	mu          sync.Mutex
	handed      []registry.WorkloadEvent
}

func newFake(p model.Provider, cluster model.ClusterID) *fakeRegistry {
	shard := model.ShardKey{Provider: p, Cluster: cluster}
	st := store.New()
	return &fakeRegistry{Reader: st, st: st, shard: shard}
}

// Subscribe is the store's, counted while subscribed.
func (f *fakeRegistry) Subscribe(h registry.Handler) (unsubscribe func()) {
	f.subscribers.Add(1)
	unsub := f.st.Subscribe(h)
	var once sync.Once
	return func() {
		once.Do(func() { f.subscribers.Add(-1) })
		unsub()
	}
}

func (f *fakeRegistry) Provider() model.Provider { return f.shard.Provider }
func (f *fakeRegistry) Cluster() model.ClusterID { return f.shard.Cluster }

func (f *fakeRegistry) Run(ctx context.Context) error {
	f.running.Store(true)
	if !f.holdSync {
		f.st.MarkSynced()
	}
	<-ctx.Done()
	f.running.Store(false)
	return nil
}

func (f *fakeRegistry) service(name, ns string, ports ...model.Port) *model.Service {
	host := model.KubeServiceHostname(name, ns, "cluster.local")
	if f.shard.Provider == model.External {
		host = model.Hostname(name)
	}
	svc := &model.Service{
		Hostname: host, Namespace: ns, Name: name, Provider: f.shard.Provider, Ports: ports,
	}
	f.st.UpsertService(svc)
	return svc
}

func (f *fakeRegistry) endpoints(svc *model.Service, ips ...string) {
	var eps []*model.Endpoint
	for _, ip := range ips {
		for _, p := range svc.Ports {
			eps = append(eps, &model.Endpoint{
				Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: p.Port,
				ServicePortName: p.Name, Cluster: f.shard.Cluster,
			})
		}
	}
	f.st.SetEndpoints(f.shard, svc.Key(), eps)
}

func (f *fakeRegistry) workload(kind model.WorkloadKind, name, ns, ip string, network model.NetworkID) *model.WorkloadInstance {
	w := &model.WorkloadInstance{Kind: kind, Name: name, Namespace: ns, Endpoint: model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Cluster: f.shard.Cluster, Network: network,
	}}
	f.st.UpsertWorkload(w)
	return w
}

// sinkRegistry is a fakeRegistry that takes other registries' workloads.
type sinkRegistry struct{ *fakeRegistry }

func (s sinkRegistry) HandleWorkload(ev registry.WorkloadEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handed = append(s.handed, ev)
}

// held returns the names of the workloads handed to the sink and not
// deleted since, sorted by key.
func (s sinkRegistry) held() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, ev := range s.handed {
		w := ev.Workload()
		if ev.Type == model.EventDelete {
			delete(out, w.Key().String())
		} else {
			out[w.Key().String()] = true
		}
	}
	return out
}
