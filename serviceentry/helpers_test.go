package serviceentry

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// load decodes YAML manifests, failing the test on any error.
func load(t testing.TB, yaml string) []runtime.Object {
	t.Helper()
	objs, err := manifest.Load(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return objs
}

func loadSE(t testing.TB, yaml string) *networkingv1.ServiceEntry {
	t.Helper()
	se := toServiceEntry(load(t, yaml)[0])
	if se == nil {
		t.Fatal("not a ServiceEntry")
	}
	return se
}

func loadWE(t testing.TB, yaml string) *networkingv1.WorkloadEntry {
	t.Helper()
	we := toWorkloadEntry(load(t, yaml)[0])
	if we == nil {
		t.Fatal("not a WorkloadEntry")
	}
	return we
}

// podInstance converts a Pod the way the kube controller does in
// outline, for feeding HandleWorkload: IPs, labels, service account,
// TLS mode and topology labels, readiness, named container ports. It is
// a test stand-in, not the real conversion.
func podInstance(p *corev1.Pod, cluster model.ClusterID) *model.WorkloadInstance {
	ep := model.Endpoint{
		Labels:         p.Labels,
		Cluster:        cluster,
		Network:        model.NetworkID(p.Labels["topology.istio.io/network"]),
		Locality:       model.ParseLocality(p.Labels["topology.istio.io/locality"]),
		TLSMode:        model.ParseTLSMode(p.Labels["security.istio.io/tlsMode"]),
		ServiceAccount: model.SpiffeIdentity(model.DefaultTrustDomain, p.Namespace, p.Spec.ServiceAccountName),
		Health:         model.Unhealthy,
		NodeName:       p.Spec.NodeName,
	}
	for _, ip := range p.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil {
			ep.Addresses = append(ep.Addresses, a)
		}
	}
	if len(ep.Addresses) == 0 {
		if a, err := netip.ParseAddr(p.Status.PodIP); err == nil {
			ep.Addresses = []netip.Addr{a}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ep.Health = model.Healthy
		}
	}
	var ports map[string]uint32
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name != "" {
				if ports == nil {
					ports = map[string]uint32{}
				}
				ports[cp.Name] = uint32(cp.ContainerPort)
			}
		}
	}
	return &model.WorkloadInstance{Kind: model.KindPod, Namespace: p.Namespace, Name: p.Name, Endpoint: ep, PortMap: ports}
}

// podEvent returns an add event for a Pod manifest.
func podEvent(t testing.TB, yaml string) registry.WorkloadEvent {
	t.Helper()
	p, ok := load(t, yaml)[0].(*corev1.Pod)
	if !ok {
		t.Fatal("not a Pod")
	}
	return registry.WorkloadEvent{Type: model.EventAdd, Current: podInstance(p, "Kubernetes")}
}

// recorder is a subscriber that records every event.
type recorder struct {
	mu     sync.Mutex
	events []registry.Event
}

func (r *recorder) add(e registry.Event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) OnService(e registry.ServiceEvent)     { r.add(e) }
func (r *recorder) OnEndpoints(e registry.EndpointsEvent) { r.add(e) }
func (r *recorder) OnWorkload(e registry.WorkloadEvent)   { r.add(e) }

// take returns and clears the recorded events.
func (r *recorder) take() []registry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// start runs a controller over src until the test ends; call it inside a
// synctest bubble, and synctest.Wait for it to settle.
func start(t *testing.T, src Source, opts Options) *Controller {
	t.Helper()
	c, err := New(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return c
}
