package fanout

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshreg/meshreg/address/workloadapi"
)

// Type URLs the proxies ask for.
const (
	addressType       = "type.googleapis.com/istio.workload.Address"
	authorizationType = "type.googleapis.com/istio.security.Authorization"
)

// expectation is what a change should bring each proxy: per proxy, the
// keys still awaited (cluster names for sidecars, resource names for
// ztunnels), each with the test a resource must pass.
type expectation struct {
	start time.Time
	// sidecarCDS are CDS cluster names that must appear; sidecarEDS
	// load assignments by cluster name, each with the test it must
	// pass; ztunnel Address resources by name, likewise.
	sidecarCDS map[string]bool
	sidecarEDS map[string]func(*endpointv3.ClusterLoadAssignment) bool
	ztunnel    map[string]func(*workloadapi.Address) bool
}

// awaiting is one proxy's progress on an expectation.
type awaiting struct {
	exp     *expectation
	pending map[string]bool
	done    time.Duration // since exp.start; 0 until done
}

func newAwaiting(e *expectation, keys []string) *awaiting {
	a := &awaiting{exp: e, pending: map[string]bool{}}
	for _, k := range keys {
		a.pending[k] = true
	}
	return a
}

// met marks a key met; the last one met completes the proxy.
func (a *awaiting) met(key string) {
	if a == nil || !a.pending[key] {
		return
	}
	delete(a.pending, key)
	if len(a.pending) == 0 {
		a.done = time.Since(a.exp.start)
	}
}

// proxy is one connected client: a sidecar (delta CDS, then EDS by
// name) or a ztunnel (delta WDS, wildcard).
type proxy struct {
	id      string
	ztunnel bool
	stream  discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	bytes   *atomic.Int64

	mu sync.Mutex
	// subscribed are a sidecar's EDS cluster names.
	subscribed map[string]bool
	// unsynced are the EDS names (sidecar) or the types (ztunnel) not
	// received yet since the first response; synced is closed when it
	// empties.
	unsynced   map[string]bool
	synced     chan struct{}
	syncedOnce sync.Once
	await      *awaiting
	err        error
}

func newProxy(id string, ztunnel bool, bytes *atomic.Int64) *proxy {
	return &proxy{id: id, ztunnel: ztunnel, bytes: bytes, subscribed: map[string]bool{}, synced: make(chan struct{})}
}

// node returns the proxy's xDS node, with the metadata Istio reads.
func (p *proxy) node(ns, ip string) *corev3.Node {
	md, _ := structpb.NewStruct(map[string]any{
		"NAMESPACE":     ns,
		"CLUSTER_ID":    ClusterID,
		"INSTANCE_IPS":  ip,
		"ISTIO_VERSION": "1.31.0",
	})
	return &corev3.Node{Id: p.id, Metadata: md}
}

// start opens the stream and sends the first requests.
func (p *proxy) start(ctx context.Context, cc *grpc.ClientConn, node *corev3.Node) error {
	st, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	p.stream = st
	if p.ztunnel {
		p.unsynced = map[string]bool{addressType: true, authorizationType: true}
		if err := st.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: addressType}); err != nil {
			return err
		}
		return st.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: authorizationType})
	}
	return st.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: resourcev3.ClusterType})
}

// run reads responses until the stream ends, acknowledging each.
func (p *proxy) run() {
	for {
		resp, err := p.stream.Recv()
		if err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
			return
		}
		p.bytes.Add(int64(proto.Size(resp)))
		if err := p.handle(resp); err != nil {
			p.mu.Lock()
			p.err = fmt.Errorf("proxy %s: %w", p.id, err)
			p.mu.Unlock()
			return
		}
	}
}

func (p *proxy) handle(resp *discoveryv3.DeltaDiscoveryResponse) error {
	var subscribe, unsubscribe []string
	p.mu.Lock()
	switch resp.GetTypeUrl() {
	case resourcev3.ClusterType:
		eds := map[string]bool{}
		for _, r := range resp.GetResources() {
			var c clusterv3.Cluster
			if err := r.GetResource().UnmarshalTo(&c); err != nil {
				p.mu.Unlock()
				return err
			}
			if p.await != nil && p.await.exp.sidecarCDS[c.GetName()] {
				p.await.met(c.GetName())
			}
			if c.GetType() == clusterv3.Cluster_EDS && strings.HasPrefix(c.GetName(), "outbound|") {
				eds[c.GetName()] = true
			}
		}
		for name := range eds {
			if !p.subscribed[name] {
				p.subscribed[name] = true
				subscribe = append(subscribe, name)
			}
		}
		for _, name := range resp.GetRemovedResources() {
			if p.subscribed[name] {
				delete(p.subscribed, name)
				unsubscribe = append(unsubscribe, name)
			}
		}
		if p.unsynced == nil {
			p.unsynced = map[string]bool{}
			for name := range p.subscribed {
				p.unsynced[name] = true
			}
			p.checkSynced()
		}
	case resourcev3.EndpointType:
		for _, r := range resp.GetResources() {
			delete(p.unsynced, r.GetName())
			if p.await == nil {
				continue
			}
			test, ok := p.await.exp.sidecarEDS[r.GetName()]
			if !ok || !p.await.pending[r.GetName()] {
				continue
			}
			var cla endpointv3.ClusterLoadAssignment
			if err := r.GetResource().UnmarshalTo(&cla); err != nil {
				p.mu.Unlock()
				return err
			}
			if test(&cla) {
				p.await.met(r.GetName())
			}
		}
		p.checkSynced()
	case addressType:
		delete(p.unsynced, addressType)
		for _, r := range resp.GetResources() {
			if p.await == nil {
				break
			}
			test, ok := p.await.exp.ztunnel[r.GetName()]
			if !ok || !p.await.pending[r.GetName()] {
				continue
			}
			var a workloadapi.Address
			if err := r.GetResource().UnmarshalTo(&a); err != nil {
				p.mu.Unlock()
				return err
			}
			if test(&a) {
				p.await.met(r.GetName())
			}
		}
		p.checkSynced()
	default:
		delete(p.unsynced, resp.GetTypeUrl())
		p.checkSynced()
	}
	p.mu.Unlock()
	if err := p.stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
		return err
	}
	if len(subscribe)+len(unsubscribe) > 0 {
		return p.stream.Send(&discoveryv3.DeltaDiscoveryRequest{
			TypeUrl: resourcev3.EndpointType, ResourceNamesSubscribe: subscribe, ResourceNamesUnsubscribe: unsubscribe,
		})
	}
	return nil
}

// checkSynced closes synced once nothing awaited of the initial state
// is missing. The caller holds p.mu.
func (p *proxy) checkSynced() {
	if p.unsynced != nil && len(p.unsynced) == 0 {
		p.syncedOnce.Do(func() { close(p.synced) })
	}
}

// expect starts awaiting keys of e; none awaits nothing.
func (p *proxy) expect(e *expectation, keys []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(keys) == 0 {
		p.await = nil
		return
	}
	p.await = newAwaiting(e, keys)
}

// result returns how long the current expectation took; false when it
// is not met yet.
func (p *proxy) result() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.await == nil || len(p.await.pending) > 0 {
		return 0, false
	}
	return p.await.done, true
}

// clusters returns the number of EDS clusters a sidecar subscribes to.
func (p *proxy) clusters() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.subscribed)
}

func (p *proxy) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}
