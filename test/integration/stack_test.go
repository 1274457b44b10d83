//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/multicluster"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// secretsNS holds the cluster Secrets in the config cluster.
const secretsNS = "faults-secrets"

// stack is the registry as a control plane runs it: the config cluster's
// kube and serviceentry controllers and a multicluster controller that
// adds the remote clusters of the Secrets in secretsNS, all in one
// aggregate, with metrics.
type stack struct {
	agg     *aggregate.Controller
	metrics *prometheus.Registry
	cancel  context.CancelFunc
	done    chan error
}

func startStack(cfg *rest.Config, cluster model.ClusterID) (*stack, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ic, err := istioclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &stack{metrics: prometheus.NewRegistry(), done: make(chan error, 1)}
	kr, err := kube.New(kc, kube.Options{ClusterID: cluster, Metrics: s.metrics})
	if err != nil {
		return nil, err
	}
	src, err := serviceentry.NewInformerSource(ic, serviceentry.InformerOptions{})
	if err != nil {
		return nil, err
	}
	se, err := serviceentry.New(src, serviceentry.Options{ClusterID: cluster, Metrics: s.metrics})
	if err != nil {
		return nil, err
	}
	if s.agg, err = aggregate.New(aggregate.Options{Metrics: s.metrics}); err != nil {
		return nil, err
	}
	if err := errors.Join(s.agg.Add(kr), s.agg.Add(se)); err != nil {
		return nil, err
	}
	mc, err := multicluster.New(kc, s.agg, multicluster.Options{
		Namespace:    secretsNS,
		LocalCluster: cluster,
		Factory: multicluster.ClientFactory(func(id model.ClusterID, c kubernetes.Interface) (registry.Registry, error) {
			return kube.New(c, kube.Options{ClusterID: id, Metrics: s.metrics})
		}),
		WorkloadEntries: multicluster.WorkloadEntryFactory(multicluster.WorkloadEntryOptions{
			Registry: serviceentry.Options{Metrics: s.metrics},
		}),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	var wg sync.WaitGroup
	var errs [2]error
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = s.agg.Run(ctx) }()
	go func() { defer wg.Done(); errs[1] = mc.Run(ctx) }()
	go func() { wg.Wait(); s.done <- errors.Join(errs[:]...) }()
	return s, nil
}

func (s *stack) stop() error {
	s.cancel()
	return <-s.done
}

func (s *stack) dump() string {
	var b strings.Builder
	if err := registry.WriteJSON(&b, s.agg); err != nil {
		return "dump: " + err.Error()
	}
	return b.String()
}

// relists is the number of relists the stack's informers made.
func (s *stack) relists() float64 {
	mfs, err := s.metrics.Gather()
	if err != nil {
		return -1
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "meshreg_informer_relists_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// truth checks the registry's pod endpoints against the pods on the
// servers: every Service of cluster c that selects app=X has exactly the
// endpoints of the running pods labelled app=X, healthy when ready; no
// endpoint of a deleted pod survives, and no live endpoint is missing.
func truth(ctx context.Context, d registry.Discovery, c *faultCluster, cluster model.ClusterID, ipBase string) error {
	pods, err := c.admin.CoreV1().Pods(faultNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	svcs, err := c.admin.CoreV1().Services(faultNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, svc := range svcs.Items {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		var want []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.PodIP != "" && sel.Matches(labels.Set(p.Labels)) {
				want = append(want, p.Status.PodIP+"|"+podHealth(&p).String())
			}
		}
		key := model.ServiceKey{Namespace: faultNS, Hostname: model.KubeServiceHostname(svc.Name, faultNS, "cluster.local")}
		var got []string
		for _, ep := range d.Endpoints(key, registry.EndpointQuery{Cluster: cluster}) {
			if isPodIP(ep.Address(), ipBase) {
				got = append(got, ep.Address()+"|"+ep.Health.String())
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: %s: endpoints %v, pods %v", cluster, svc.Name, got, want)
		}
	}
	return nil
}

func podHealth(p *corev1.Pod) model.HealthStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return model.Healthy
		}
	}
	return model.Unhealthy
}

// isPodIP reports whether ip is one the workload gives pods: ipBase.x.y
// with x below 200 (VMs have the rest).
func isPodIP(ip, ipBase string) bool {
	rest, ok := strings.CutPrefix(ip, ipBase+".")
	if !ok || net.ParseIP(ip) == nil {
		return false
	}
	var x, y int
	_, err := fmt.Sscanf(rest, "%d.%d", &x, &y)
	return err == nil && x < 200
}

// mirror is a subscriber that keeps what its events say, and is slow:
// while blocked is set its handler waits, and it sleeps now and then, as
// a consumer that does real work per event would.
type mirror struct {
	// mu guards the maps.
	mu        sync.Mutex
	services  map[model.ServiceKey]bool
	endpoints map[model.ServiceKey]map[model.ShardKey][]*model.Endpoint
	workloads map[model.WorkloadKey]bool

	blocked atomic.Bool
	events  atomic.Int64
}

func newMirror() *mirror {
	return &mirror{services: map[model.ServiceKey]bool{}, endpoints: map[model.ServiceKey]map[model.ShardKey][]*model.Endpoint{},
		workloads: map[model.WorkloadKey]bool{}}
}

// slow is the handler's delay: blocked for as long as blocked is set,
// and a pause every 500 events.
func (m *mirror) slow() {
	for m.blocked.Load() {
		time.Sleep(10 * time.Millisecond)
	}
	if m.events.Add(1)%500 == 0 {
		time.Sleep(200 * time.Millisecond)
	}
}

func (m *mirror) OnService(e registry.ServiceEvent) {
	m.slow()
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Current == nil {
		delete(m.services, e.Previous.Key())
	} else {
		m.services[e.Current.Key()] = true
	}
}

func (m *mirror) OnEndpoints(e registry.EndpointsEvent) {
	m.slow()
	m.mu.Lock()
	defer m.mu.Unlock()
	shards := m.endpoints[e.Service]
	if shards == nil {
		shards = map[model.ShardKey][]*model.Endpoint{}
		m.endpoints[e.Service] = shards
	}
	if len(e.Endpoints) == 0 {
		delete(shards, e.Shard)
	} else {
		shards[e.Shard] = e.Endpoints
	}
	if len(shards) == 0 {
		delete(m.endpoints, e.Service)
	}
}

func (m *mirror) OnWorkload(e registry.WorkloadEvent) {
	m.slow()
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Current == nil {
		delete(m.workloads, e.Previous.Key())
	} else {
		m.workloads[e.Current.Key()] = true
	}
}

// agrees reports whether the mirror holds the registry's services,
// endpoints and workloads, and says how it differs when not.
func (m *mirror) agrees(d registry.Discovery) (bool, string) {
	want := map[model.ServiceKey]bool{}
	wantEps := map[model.ServiceKey][]string{}
	for _, s := range d.Services() {
		want[s.Key()] = true
		for _, ep := range d.Endpoints(s.Key(), registry.EndpointQuery{}) {
			wantEps[s.Key()] = append(wantEps[s.Key()], endpointString(ep))
		}
	}
	wantWls := map[model.WorkloadKey]bool{}
	for _, w := range d.Workloads() {
		wantWls[w.Key()] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !maps.Equal(m.services, want) {
		return false, fmt.Sprintf("services: mirror %d, registry %d", len(m.services), len(want))
	}
	if !maps.Equal(m.workloads, wantWls) {
		return false, fmt.Sprintf("workloads: mirror %d, registry %d", len(m.workloads), len(wantWls))
	}
	for key := range want {
		var got []string
		for _, eps := range m.endpoints[key] {
			for _, ep := range eps {
				got = append(got, endpointString(ep))
			}
		}
		slices.Sort(got)
		w := wantEps[key]
		slices.Sort(w)
		if !slices.Equal(got, w) {
			return false, fmt.Sprintf("%s: mirror %v, registry %v", key.Hostname, got, w)
		}
	}
	for key := range m.endpoints {
		if !want[key] {
			return false, fmt.Sprintf("%s: endpoints of a service the registry lacks", key.Hostname)
		}
	}
	return true, ""
}

func endpointString(ep *model.Endpoint) string {
	return fmt.Sprintf("%s|%s|%s:%d|%s", ep.Cluster, ep.ServicePortName, ep.Address(), ep.Port, ep.Health)
}
