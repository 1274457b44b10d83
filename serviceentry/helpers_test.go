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
// outline, for feeding HandleWorkload: IPs, labels, service account, TLS
// mode and topology labels, named container ports. As the kube registry
// (and Istio) does, it publishes only a pod that can serve: Ready
// condition True, not in a terminal phase, not being deleted, with an IP;
// for any other pod it returns nil. It is a test stand-in, not the real
// conversion.
func podInstance(p *corev1.Pod, cluster model.ClusterID) *model.WorkloadInstance {
	if !podServes(p) {
		return nil
	}
	ep := model.Endpoint{
		Labels:         p.Labels,
		Cluster:        cluster,
		Network:        model.NetworkID(p.Labels["topology.istio.io/network"]),
		Locality:       model.ParseLocality(p.Labels["topology.istio.io/locality"]),
		TLSMode:        model.ParseTLSMode(p.Labels["security.istio.io/tlsMode"]),
		ServiceAccount: model.SpiffeIdentity(model.DefaultTrustDomain, p.Namespace, p.Spec.ServiceAccountName),
		Health:         model.Healthy,
		Serving:        true,
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
	if len(ep.Addresses) == 0 {
		return nil
	}
	return &model.WorkloadInstance{Kind: model.KindPod, Namespace: p.Namespace, Name: p.Name, Endpoint: ep, PortMap: podPortMap(p)}
}

// podServes reports whether a pod is published as a workload: Ready, not
// terminal, not being deleted.
func podServes(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podPortMap maps a pod's named TCP ports (protocol unset is TCP, the API
// server's default) to their numbers: the containers' and then the native
// sidecars' (init containers with restartPolicy Always); the first port
// of a name wins. Nil when there is none.
func podPortMap(p *corev1.Pod) map[string]uint32 {
	var out map[string]uint32
	add := func(cs []corev1.Container) {
		for _, c := range cs {
			for _, cp := range c.Ports {
				if cp.Name == "" || (cp.Protocol != "" && cp.Protocol != corev1.ProtocolTCP) {
					continue
				}
				if out == nil {
					out = map[string]uint32{}
				}
				if _, dup := out[cp.Name]; !dup {
					out[cp.Name] = uint32(cp.ContainerPort)
				}
			}
		}
	}
	add(p.Spec.Containers)
	var sidecars []corev1.Container
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars = append(sidecars, c)
		}
	}
	add(sidecars)
	return out
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
	startController(t, c)
	return c
}

// startController runs c until the test ends.
func startController(t *testing.T, c *Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
