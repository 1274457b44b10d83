package bench

import (
	"fmt"
	"net/netip"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Config sizes a generated cluster. The zero value of every field but
// Services and EndpointsPerService takes the default its doc names.
type Config struct {
	// Name labels the results, e.g. "medium".
	Name string
	// Services is the number of Services; each has two ports (http and
	// grpc).
	Services int
	// EndpointsPerService is the number of pods (one ready endpoint
	// each) behind every Service.
	EndpointsPerService int
	// ServicesPerNamespace spreads Services over namespaces. Default 50.
	ServicesPerNamespace int
	// PodsPerNode spreads pods over nodes. Default 30.
	PodsPerNode int
	// Zones is the number of zones nodes are spread over, all in one
	// region. Default 3.
	Zones int
	// MaxEndpointsPerSlice caps an EndpointSlice, as the EndpointSlice
	// controller does. Default 100.
	MaxEndpointsPerSlice int
	// ServiceEntryEvery makes one ServiceEntry per that many Services,
	// selecting the Service's pods. Default 20; negative for none.
	ServiceEntryEvery int
}

// Presets are the standard sizes. xl is meant to be run by hand.
var Presets = map[string]Config{
	"small":  {Name: "small", Services: 200, EndpointsPerService: 10},
	"medium": {Name: "medium", Services: 2000, EndpointsPerService: 25},
	"large":  {Name: "large", Services: 10000, EndpointsPerService: 10},
	"xl":     {Name: "xl", Services: 20000, EndpointsPerService: 25},
}

// PresetNames lists Presets in size order.
var PresetNames = []string{"small", "medium", "large", "xl"}

func (c Config) withDefaults() Config {
	if c.ServicesPerNamespace <= 0 {
		c.ServicesPerNamespace = 50
	}
	if c.PodsPerNode <= 0 {
		c.PodsPerNode = 30
	}
	if c.Zones <= 0 {
		c.Zones = 3
	}
	if c.MaxEndpointsPerSlice <= 0 {
		c.MaxEndpointsPerSlice = 100
	}
	if c.ServiceEntryEvery == 0 {
		c.ServiceEntryEvery = 20
	}
	return c
}

// Endpoints returns the number of pod endpoints (one per pod; each serves
// both ports of its Service).
func (c Config) Endpoints() int { return c.Services * c.EndpointsPerService }

// Scenario is a generated cluster. Objects are built fully (as an API
// server would return them, without managed fields), so the floor's
// informers hold realistic objects.
type Scenario struct {
	Config         Config
	Namespaces     []*corev1.Namespace
	Nodes          []*corev1.Node
	Services       []*corev1.Service
	Slices         []*discoveryv1.EndpointSlice
	Pods           []*corev1.Pod
	ServiceEntries []*networkingv1.ServiceEntry
}

// Ports of every generated Service and its pods.
const (
	HTTPPort       = 80
	HTTPTargetPort = 8080
	GRPCPort       = 9090
	Region         = "region-1"
	DomainSuffix   = "cluster.local"
	Cluster        = "bench"
)

// epoch is the creation time of every generated object.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// ServiceName returns the name of Service i.
func ServiceName(i int) string { return fmt.Sprintf("svc-%05d", i) }

// NamespaceOf returns the namespace of Service i.
func (c Config) NamespaceOf(i int) string {
	return fmt.Sprintf("ns-%03d", i/c.withDefaults().ServicesPerNamespace)
}

// PodIP returns the IP of pod n (0-based, in generation order): 10.64.0.0
// onwards, so up to 4M pods.
func PodIP(n int) netip.Addr {
	n += 1 << 8 // skip 10.64.0.0/24
	return netip.AddrFrom4([4]byte{10, byte(64 + n>>16), byte(n >> 8), byte(n)})
}

// ServiceIP returns the cluster IP of Service i.
func ServiceIP(i int) netip.Addr {
	i++
	return netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
}

// Generate builds the cluster c describes. The result depends on c alone.
func Generate(c Config) *Scenario {
	c = c.withDefaults()
	s := &Scenario{Config: c}
	nns := (c.Services + c.ServicesPerNamespace - 1) / c.ServicesPerNamespace
	for i := range nns {
		name := fmt.Sprintf("ns-%03d", i)
		s.Namespaces = append(s.Namespaces, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: meta("", name, map[string]string{"kubernetes.io/metadata.name": name, "istio-injection": "enabled"}),
			Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})
	}
	nnodes := max(1, (c.Endpoints()+c.PodsPerNode-1)/c.PodsPerNode)
	for i := range nnodes {
		s.Nodes = append(s.Nodes, node(i, c.Zones))
	}
	pod := 0
	for i := range c.Services {
		ns, name := c.NamespaceOf(i), ServiceName(i)
		s.Services = append(s.Services, service(ns, name, ServiceIP(i)))
		var eps []discoveryv1.Endpoint
		for j := range c.EndpointsPerService {
			p := newPod(ns, name, j, PodIP(pod), s.Nodes[pod%nnodes], c.Zones)
			s.Pods = append(s.Pods, p)
			eps = append(eps, sliceEndpoint(p, pod%nnodes, c.Zones))
			pod++
		}
		for k := 0; k*c.MaxEndpointsPerSlice < len(eps); k++ {
			part := eps[k*c.MaxEndpointsPerSlice : min(len(eps), (k+1)*c.MaxEndpointsPerSlice)]
			s.Slices = append(s.Slices, slice(ns, name, k, part))
		}
		if c.ServiceEntryEvery > 0 && i%c.ServiceEntryEvery == 0 {
			s.ServiceEntries = append(s.ServiceEntries, serviceEntry(ns, name))
		}
	}
	return s
}

// KubeObjects returns every Kubernetes object, in an order that puts
// dependencies first (namespaces, nodes, services, pods, slices).
func (s *Scenario) KubeObjects() []runtime.Object {
	out := make([]runtime.Object, 0, len(s.Namespaces)+len(s.Nodes)+len(s.Services)+len(s.Pods)+len(s.Slices))
	for _, o := range s.Namespaces {
		out = append(out, o)
	}
	for _, o := range s.Nodes {
		out = append(out, o)
	}
	for _, o := range s.Services {
		out = append(out, o)
	}
	for _, o := range s.Pods {
		out = append(out, o)
	}
	for _, o := range s.Slices {
		out = append(out, o)
	}
	return out
}

// Counts summarises a scenario.
type Counts struct {
	Namespaces, Nodes, Zones, Services, Ports, Pods, Slices, SliceEndpoints, ServiceEntries int
}

// light returns the scenario without its Namespaces, Nodes, Pods and
// EndpointSlices: what the harness reads once a clientset is preloaded
// (Config, Services and ServiceEntries). Config.Endpoints() counts the
// pods.
func (s *Scenario) light() *Scenario {
	l := *s
	l.Namespaces, l.Nodes, l.Pods, l.Slices = nil, nil, nil, nil
	return &l
}

// Counts counts the scenario's objects.
func (s *Scenario) Counts() Counts {
	c := Counts{
		Namespaces: len(s.Namespaces), Nodes: len(s.Nodes), Services: len(s.Services),
		Pods: len(s.Pods), Slices: len(s.Slices), ServiceEntries: len(s.ServiceEntries),
	}
	zones := map[string]bool{}
	for _, n := range s.Nodes {
		zones[n.Labels[corev1.LabelTopologyZone]] = true
	}
	c.Zones = len(zones)
	for _, svc := range s.Services {
		c.Ports += len(svc.Spec.Ports)
	}
	for _, sl := range s.Slices {
		c.SliceEndpoints += len(sl.Endpoints)
	}
	return c
}
