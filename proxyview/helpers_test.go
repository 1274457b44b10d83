package proxyview

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// fakeSource is a registry.Reader whose state the test sets directly;
// its Subscribe delivers nothing, so tests tell the view what changed
// (markFrom) and apply. It answers only the queries the view makes.
type fakeSource struct {
	registry.Discovery // nil: the other queries are not used
	services           map[model.ServiceKey]*model.Service
	endpoints          map[model.ServiceKey][]*model.Endpoint
	gateways           []model.NetworkGateway
}

func newFake() *fakeSource {
	return &fakeSource{services: map[model.ServiceKey]*model.Service{}, endpoints: map[model.ServiceKey][]*model.Endpoint{}}
}

func (f *fakeSource) ServiceByKey(k model.ServiceKey) *model.Service { return f.services[k] }
func (f *fakeSource) Endpoints(k model.ServiceKey, _ registry.EndpointQuery) []*model.Endpoint {
	return f.endpoints[k]
}
func (f *fakeSource) NetworkGateways() []model.NetworkGateway         { return f.gateways }
func (f *fakeSource) Subscribe(registry.Handler) (unsubscribe func()) { return func() {} }
func (f *fakeSource) HasSynced() bool                                 { return true }

// ProxyTargets answers from a store holding f's state, each endpoint in
// the shard of its service's provider and its cluster.
func (f *fakeSource) ProxyTargets(q registry.ProxyQuery) []model.ServiceTarget {
	st := store.New()
	for key, svc := range f.services {
		st.UpsertService(svc)
		byShard := map[model.ShardKey][]*model.Endpoint{}
		for _, e := range f.endpoints[key] {
			shard := model.ShardKey{Provider: svc.Provider, Cluster: e.Cluster}
			byShard[shard] = append(byShard[shard], e)
		}
		for shard, eps := range byShard {
			st.SetEndpoints(shard, key, eps) // the store's own copies: it sorts them
		}
	}
	return st.ProxyTargets(q)
}

func (f *fakeSource) add(svc *model.Service, eps ...*model.Endpoint) *model.Service {
	f.services[svc.Key()] = svc
	f.endpoints[svc.Key()] = eps
	return svc
}

// view returns a view of everything in f, built without Run: it is
// told of each service as the source's events would tell it, and
// synced.
func (f *fakeSource) view(t *testing.T, opts Options) *View {
	t.Helper()
	v, err := New(f, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for k := range f.services {
		markFrom(v, f, k)
	}
	v.markGateways(f)
	v.markSynced()
	v.apply()
	return v
}

// snapshot returns the snapshot of f's view.
func (f *fakeSource) snapshot(t *testing.T, opts Options) *Snapshot {
	t.Helper()
	return f.view(t, opts).Snapshot()
}

// markFrom tells v what src holds for a service, as the source's events
// would: the service (or its delete), and its endpoints.
func markFrom(v *View, src registry.Discovery, key model.ServiceKey) {
	if svc := src.ServiceByKey(key); svc != nil {
		v.markService(registry.ServiceEvent{Type: model.EventUpdate, Current: svc})
	} else {
		v.markService(registry.ServiceEvent{Type: model.EventDelete, Previous: &model.Service{Namespace: key.Namespace, Hostname: key.Hostname}})
	}
	v.markEndpoints(key, src.Endpoints(key, registry.EndpointQuery{}))
}

// The view's marks and apply, for tests that drive it without Run.
func (v *View) markService(e registry.ServiceEvent) { v.handler().OnService(e) }
func (v *View) markEndpoints(key model.ServiceKey, all []*model.Endpoint) {
	v.handler().OnEndpoints(registry.EndpointsEvent{Service: key, All: all})
}
func (v *View) markSynced() { v.handler().OnSynced(registry.SyncedEvent{}) }
func (v *View) apply()      { v.loop.Flush(v.applyBatch) }

// markGateways tells v the network gateways of src, when it has any.
func (v *View) markGateways(src registry.Reader) {
	var gws []model.NetworkGateway
	if gd, ok := src.(registry.GatewayDiscovery); ok {
		gws = gd.NetworkGateways()
	}
	v.handler().OnNetworkGateways(registry.NetworkGatewaysEvent{Gateways: gws})
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// kube returns a Kubernetes Service name.ns with one port "http" 80 and,
// per cluster given, a VIP.
func kube(name, ns string, exportTo ...string) *model.Service {
	return &model.Service{
		Hostname: model.KubeServiceHostname(name, ns, model.DefaultDomainSuffix), Namespace: ns, Name: name,
		Provider: model.Kubernetes, Ports: []model.Port{{Name: "http", Port: 80, Protocol: model.HTTP}},
		ExportTo: exportTo, CreationTime: epoch,
	}
}

// entry returns a ServiceEntry host in ns, created age minutes after the
// epoch.
func serviceEntry(host, ns string, minutes int, exportTo ...string) *model.Service {
	return &model.Service{
		Hostname: model.Hostname(host), Namespace: ns, Name: host + "-" + ns, Provider: model.External,
		Ports: []model.Port{{Name: "http", Port: 80, Protocol: model.HTTP}}, ExportTo: exportTo,
		CreationTime: epoch.Add(time.Duration(minutes) * time.Minute),
	}
}

// ep returns an endpoint of port "http" at ip:8080.
func ep(ip string, mutate ...func(*model.Endpoint)) *model.Endpoint {
	e := &model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: 8080, ServicePortName: "http", Serving: true}
	for _, m := range mutate {
		m(e)
	}
	return e
}

func on(network model.NetworkID, cluster model.ClusterID) func(*model.Endpoint) {
	return func(e *model.Endpoint) { e.Network, e.Cluster, e.TLSMode = network, cluster, model.TLSIstio }
}

func keys(svcs []*model.Service) []string {
	out := make([]string, len(svcs))
	for i, s := range svcs {
		out[i] = s.Key().String()
	}
	return out
}

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p)
			continue
		}
		a := netip.MustParseAddr(s)
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out
}

func ips(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// flat lists a load assignment as "locality address:port weight health"
// lines (a unix socket's address unix://PATH), gateways marked "gw".
func flat(les []LocalityEndpoints) []string {
	var out []string
	for _, le := range les {
		for _, e := range le.Endpoints {
			addr := netip.AddrPortFrom(e.Address, uint16(e.Port)).String()
			if e.Path != "" {
				addr = "unix://" + e.Path + ":" + strconv.FormatUint(uint64(e.Port), 10)
			}
			s := le.Locality.String() + " " + addr + " w" + strconv.FormatUint(uint64(e.Weight), 10) + " " + e.Health.String()
			if e.Gateway != nil {
				s += " gw"
			}
			out = append(out, s)
		}
	}
	return out
}

var registryAll = registry.EndpointQuery{}
