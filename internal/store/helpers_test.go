package store_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshreg/meshreg/internal/store"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

var (
	kubeShard = model.ShardKey{Provider: model.Kubernetes, Cluster: "c1"}
	seShard   = model.ShardKey{Provider: model.External, Cluster: "c1"}
	// Shards of two clusters, for the aggregate's store of many.
	kubeA = model.ShardKey{Provider: model.Kubernetes, Cluster: "a"}
	kubeB = model.ShardKey{Provider: model.Kubernetes, Cluster: "b"}
	seA   = model.ShardKey{Provider: model.External, Cluster: "a"}
)

// kubeService returns a Kubernetes Service with one http port.
func kubeService(ns, name string) *model.Service {
	return &model.Service{
		Hostname: model.KubeServiceHostname(name, ns, model.DefaultDomainSuffix), Namespace: ns, Name: name,
		Provider: model.Kubernetes,
		Ports:    []model.Port{{Name: "http", Port: 9080, Protocol: model.HTTP}},
	}
}

// serviceEntry returns a ServiceEntry host created at the given minute.
func serviceEntry(ns, name string, host model.Hostname, minute int) *model.Service {
	return &model.Service{
		Hostname: host, Namespace: ns, Name: name, Provider: model.External,
		Ports:        []model.Port{{Name: "http", Port: 80, Protocol: model.HTTP}},
		CreationTime: time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC),
	}
}

// endpoint returns an endpoint of port "http" in cluster c1.
func endpoint(ip string, port uint32) *model.Endpoint {
	return &model.Endpoint{
		Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Port: port, ServicePortName: "http", Cluster: "c1",
	}
}

func pod(ns, name string, ips ...string) *model.WorkloadInstance {
	w := &model.WorkloadInstance{Kind: model.KindPod, Namespace: ns, Name: name, Endpoint: model.Endpoint{Cluster: "c1"}}
	for _, ip := range ips {
		w.Endpoint.Addresses = append(w.Endpoint.Addresses, netip.MustParseAddr(ip))
	}
	return w
}

// recorder is a Handler that writes each event as one line of text, so
// tests can state the events they expect as a list of lines.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, line)
}

func (r *recorder) OnService(e registry.ServiceEvent) {
	r.add(fmt.Sprintf("%s service %s", e.Type, e.Service().Key()))
}

func (r *recorder) OnEndpoints(e registry.EndpointsEvent) {
	keys := make([]string, len(e.Endpoints))
	for i, ep := range e.Endpoints {
		keys[i] = ep.Key().String()
	}
	r.add(fmt.Sprintf("endpoints %s %s [%s]", e.Shard, e.Service, strings.Join(keys, " ")))
}

func (r *recorder) OnWorkload(e registry.WorkloadEvent) {
	r.add(fmt.Sprintf("%s workload %s", e.Type, e.Workload().Key()))
}

// take returns the events recorded so far and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// expect checks that exactly the given events were recorded since the last
// call, and forgets them. Call it after synctest.Wait.
func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	got := r.take()
	if !slices.Equal(got, want) {
		t.Errorf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// newStore returns a store of the Kubernetes shard, its read side, and a
// recorder subscribed to it; the subscription ends with the test.
func newStore(t *testing.T) (*store.Store, registry.Reader, *recorder) {
	t.Helper()
	s := store.New()
	rec := &recorder{}
	t.Cleanup(s.Subscribe(rec))
	return s, s, rec
}
