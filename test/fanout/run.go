package fanout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/address/workloadapi"
)

// Options configure Run.
type Options struct {
	// XDSAddr is the server's ADS address; Control its control API.
	XDSAddr string
	Control Control
	// World is the world the server was started with.
	World World
	// Sidecars and Ztunnels are the proxies to connect: sidecars spread
	// over the namespaces (the shared one aside) in turn.
	Sidecars, Ztunnels int
	// StreamsPerConn is how many streams share a gRPC connection.
	// Default: 20.
	StreamsPerConn int
	// Burst is the number of endpoint changes of the burst. Default: 100.
	Burst int
	// Timeout bounds each wait: the connection of every proxy, each
	// change. Default: 10 minutes.
	Timeout time.Duration
	// Quiet is how long Run waits after a change has reached every
	// proxy before it reads the server's CPU. Default: 1s.
	Quiet time.Duration
	// Logger says what Run does. Default: discard.
	Logger *slog.Logger
}

func (o Options) defaults() Options {
	if o.StreamsPerConn <= 0 {
		o.StreamsPerConn = 20
	}
	if o.Burst <= 0 {
		o.Burst = 100
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Quiet <= 0 {
		o.Quiet = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Report is what Run measured.
type Report struct {
	World    World `json:"world"`
	Sidecars int   `json:"sidecars"`
	Ztunnels int   `json:"ztunnels"`
	// Clusters is the number of EDS clusters a sidecar subscribes to
	// (the median over sidecars).
	Clusters int `json:"clustersPerSidecar"`
	// Connect is the time from the first proxy connecting to the last
	// having the whole world.
	Connect Millis `json:"connectMs"`
	// HeapIdle is the server's heap before any proxy connected;
	// HeapPerProxy the growth per connected proxy once all are.
	HeapIdle     uint64 `json:"heapIdleBytes"`
	HeapPerProxy uint64 `json:"heapPerProxyBytes"`
	// IdleCPU is the server's CPU per second before the first change.
	IdleCPU float64        `json:"idleCpuPerSecond"`
	Changes []ChangeReport `json:"changes"`
}

// ChangeReport is one change's figures.
type ChangeReport struct {
	Name string `json:"name"`
	// Sidecars and Ztunnels are the times, from the change's write to
	// the server, until each proxy that should get it had it.
	Sidecars Latency `json:"sidecars"`
	Ztunnels Latency `json:"ztunnels"`
	// CPU is the server's CPU from the write to Quiet after the last
	// proxy had it, with the idle CPU of that time taken out.
	CPU float64 `json:"cpuSeconds"`
	// Bytes is what the proxies received meanwhile (the responses'
	// protobuf size).
	Bytes int64 `json:"bytes"`
}

// Latency summarizes times over proxies.
type Latency struct {
	N   int    `json:"n"`
	P50 Millis `json:"p50Ms"`
	P99 Millis `json:"p99Ms"`
	Max Millis `json:"maxMs"`
}

// Millis is a duration printed in milliseconds.
type Millis float64

func millis(d time.Duration) Millis { return Millis(float64(d.Microseconds()) / 1000) }

func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return Latency{N: len(ds), P50: millis(at(0.5)), P99: millis(at(0.99)), Max: millis(ds[len(ds)-1])}
}

// Run connects the proxies, waits until each has the world, measures the
// server's heap, then applies the changes one at a time, measuring each.
func Run(ctx context.Context, opts Options) (*Report, error) {
	o := opts.defaults()
	log := o.Logger
	if o.Sidecars+o.Ztunnels <= 0 {
		return nil, ErrNoProxies
	}
	if err := waitCtx(ctx, o.Timeout, o.Control.WaitReady); err != nil {
		return nil, err
	}
	idle, err := o.Control.Stats(ctx, true)
	if err != nil {
		return nil, err
	}
	rep := &Report{World: o.World, Sidecars: o.Sidecars, Ztunnels: o.Ztunnels, HeapIdle: idle.HeapBytes}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var received atomic.Int64
	var proxies []*proxy
	var conns []*grpc.ClientConn
	defer func() {
		for _, cc := range conns {
			cc.Close()
		}
	}()
	connect := func(i int) (*grpc.ClientConn, error) {
		if i%o.StreamsPerConn == 0 {
			cc, err := grpc.NewClient(o.XDSAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
			if err != nil {
				return nil, err
			}
			conns = append(conns, cc)
		}
		return conns[len(conns)-1], nil
	}
	began := time.Now()
	for i := range o.Sidecars + o.Ztunnels {
		cc, err := connect(i)
		if err != nil {
			return nil, err
		}
		var (
			p    *proxy
			node *corev3.Node
		)
		if i < o.Sidecars {
			ns := Namespace(i % max(1, o.World.Namespaces))
			ip := fmt.Sprintf("10.200.%d.%d", i/250, i%250+1)
			p = newProxy(fmt.Sprintf("sidecar~%s~client-%d.%s~%s.svc.cluster.local", ip, i, ns, ns), false, &received)
			node = p.node(ns, ip)
		} else {
			j := i - o.Sidecars
			ip := fmt.Sprintf("10.201.%d.%d", j/250, j%250+1)
			p = newProxy(fmt.Sprintf("ztunnel~%s~ztunnel-%d.istio-system~istio-system.svc.cluster.local", ip, j), true, &received)
			node = p.node("istio-system", ip)
		}
		if err := p.start(ctx, cc, node); err != nil {
			return nil, fmt.Errorf("proxy %s: %w", p.id, err)
		}
		go p.run()
		proxies = append(proxies, p)
	}
	log.Info("proxies connecting", "sidecars", o.Sidecars, "ztunnels", o.Ztunnels, "conns", len(conns))
	deadline := time.After(o.Timeout)
	for _, p := range proxies {
		select {
		case <-p.synced:
		case <-deadline:
			return nil, fmt.Errorf("proxy %s had not the world after %v (error: %v)", p.id, o.Timeout, p.failure())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	rep.Connect = millis(time.Since(began))
	var clusters []int
	for _, p := range proxies[:o.Sidecars] {
		clusters = append(clusters, p.clusters())
	}
	if len(clusters) > 0 {
		slices.Sort(clusters)
		rep.Clusters = clusters[len(clusters)/2]
	}
	log.Info("proxies have the world", "took", time.Duration(rep.Connect*1e6).String(), "clustersPerSidecar", rep.Clusters)

	// Heap per proxy, and the idle CPU rate over a quiet period.
	time.Sleep(o.Quiet)
	s0, err := o.Control.Stats(ctx, true)
	if err != nil {
		return nil, err
	}
	if n := uint64(len(proxies)); n > 0 && s0.HeapBytes > idle.HeapBytes {
		rep.HeapPerProxy = (s0.HeapBytes - idle.HeapBytes) / n
	}
	t0 := time.Now()
	time.Sleep(2 * time.Second)
	s1, err := o.Control.Stats(ctx, false)
	if err != nil {
		return nil, err
	}
	rep.IdleCPU = (s1.CPUSeconds - s0.CPUSeconds) / time.Since(t0).Seconds()

	for _, c := range Changes(o.World, o.Burst) {
		cr, err := measure(ctx, o, proxies, c, &received, rep.IdleCPU)
		if err != nil {
			return nil, fmt.Errorf("change %s: %w", c.Name, err)
		}
		log.Info("change measured", "change", c.Name, "sidecarsP99ms", cr.Sidecars.P99, "ztunnelsP99ms", cr.Ztunnels.P99, "cpu", cr.CPU)
		rep.Changes = append(rep.Changes, cr)
	}
	for _, p := range proxies {
		if err := p.failure(); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func waitCtx(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return f(ctx)
}

// Change is one change Run applies: the objects written, and what each
// proxy must then receive.
type Change struct {
	Name    string
	Objects []runtime.Object
	exp     func(start time.Time) *expectation
}

// Changes are the changes Run measures, in order: one endpoint change
// (a shared Service's Pod turns not ready), one Service change (a shared
// Service gains a port), and a burst of endpoint changes (burst other
// shared Services' Pods, written at once).
func Changes(w World, burst int) []Change {
	burst = min(burst, w.SharedServices-2)
	unready := func(js ...int) func(time.Time) *expectation {
		return func(start time.Time) *expectation {
			e := &expectation{start: start, sidecarEDS: map[string]func(*endpointv3.ClusterLoadAssignment) bool{},
				ztunnel: map[string]func(*workloadapi.Address) bool{}}
			for _, j := range js {
				ip := w.UnreadyIP(j)
				e.sidecarEDS[clusterName(Hostname(SharedNamespace, j), ServicePort)] = func(cla *endpointv3.ClusterLoadAssignment) bool {
					return !healthyIn(cla, ip)
				}
				e.ztunnel[fmt.Sprintf("%s//Pod/%s/%s", ClusterID, SharedNamespace, PodName(j, 0))] = func(a *workloadapi.Address) bool {
					return a.GetWorkload().GetStatus() == workloadapi.WorkloadStatus_UNHEALTHY
				}
			}
			return e
		}
	}
	var burstObjs []runtime.Object
	var burstJs []int
	for j := 2; j < 2+burst; j++ {
		burstObjs = append(burstObjs, w.Unready(j)...)
		burstJs = append(burstJs, j)
	}
	return []Change{
		{Name: "endpoint", Objects: w.Unready(0), exp: unready(0)},
		{Name: "service", Objects: w.WithSecondPort(1), exp: func(start time.Time) *expectation {
			host := Hostname(SharedNamespace, 1)
			return &expectation{start: start,
				sidecarCDS: map[string]bool{clusterName(host, AddedPort): true},
				ztunnel: map[string]func(*workloadapi.Address) bool{SharedNamespace + "/" + host: func(a *workloadapi.Address) bool {
					return slices.ContainsFunc(a.GetService().GetPorts(), func(p *workloadapi.Port) bool { return p.GetServicePort() == AddedPort })
				}},
			}
		}},
		{Name: fmt.Sprintf("burst of %d endpoints", burst), Objects: burstObjs, exp: unready(burstJs...)},
	}
}

func clusterName(host string, port int) string { return fmt.Sprintf("outbound|%d||%s", port, host) }

// healthyIn reports whether a load assignment holds ip as a healthy (or
// unknown-health) endpoint.
func healthyIn(cla *endpointv3.ClusterLoadAssignment, ip netip.Addr) bool {
	for _, loc := range cla.GetEndpoints() {
		for _, lb := range loc.GetLbEndpoints() {
			if lb.GetEndpoint().GetAddress().GetSocketAddress().GetAddress() != ip.String() {
				continue
			}
			switch lb.GetHealthStatus() {
			case corev3.HealthStatus_HEALTHY, corev3.HealthStatus_UNKNOWN:
				return true
			}
		}
	}
	return false
}

// measure applies one change and waits until every proxy has it.
func measure(ctx context.Context, o Options, proxies []*proxy, c Change, received *atomic.Int64, idleCPU float64) (ChangeReport, error) {
	var body bytes.Buffer
	if err := WriteYAML(&body, c.Objects); err != nil {
		return ChangeReport{}, err
	}
	before, err := o.Control.Stats(ctx, false)
	if err != nil {
		return ChangeReport{}, err
	}
	bytes0 := received.Load()
	start := time.Now()
	e := c.exp(start)
	sidecarKeys := slices.Collect(maps.Keys(e.sidecarEDS))
	for k := range e.sidecarCDS {
		sidecarKeys = append(sidecarKeys, k)
	}
	ztunnelKeys := slices.Collect(maps.Keys(e.ztunnel))
	for _, p := range proxies {
		if p.ztunnel {
			p.expect(e, ztunnelKeys)
		} else {
			p.expect(e, sidecarKeys)
		}
	}
	if err := o.Control.Apply(ctx, body.Bytes()); err != nil {
		return ChangeReport{}, err
	}
	deadline := time.Now().Add(o.Timeout)
	var sidecars, ztunnels []time.Duration
	for _, p := range proxies {
		for {
			d, ok := p.result()
			if ok {
				if p.ztunnel {
					ztunnels = append(ztunnels, d)
				} else {
					sidecars = append(sidecars, d)
				}
				break
			}
			if err := p.failure(); err != nil {
				return ChangeReport{}, err
			}
			if time.Now().After(deadline) {
				return ChangeReport{}, fmt.Errorf("proxy %s did not get the change in %v", p.id, o.Timeout)
			}
			select {
			case <-ctx.Done():
				return ChangeReport{}, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	time.Sleep(o.Quiet)
	after, err := o.Control.Stats(ctx, false)
	if err != nil {
		return ChangeReport{}, err
	}
	window := time.Since(start).Seconds()
	for _, p := range proxies {
		p.expect(nil, nil)
	}
	return ChangeReport{
		Name:     c.Name,
		Sidecars: latencyOf(sidecars),
		Ztunnels: latencyOf(ztunnels),
		CPU:      max(0, after.CPUSeconds-before.CPUSeconds-idleCPU*window),
		Bytes:    received.Load() - bytes0,
	}, nil
}

// ErrNoProxies is returned by Run without proxies to connect.
var ErrNoProxies = errors.New("fanout: no proxies")
