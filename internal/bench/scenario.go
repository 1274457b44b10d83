package bench

import (
	"fmt"
	"net/netip"
	"time"

	networkingapiv1 "istio.io/api/networking/v1"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
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

func uid(kind, ns, name string) types.UID {
	return types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", len(kind)+len(ns), hash(kind+"/"+ns+"/"+name)&0xffffffffffff))
}

// hash is FNV-1a, for stable UIDs.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func meta(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: labels,
		UID:               uid("", ns, name),
		CreationTimestamp: metav1.NewTime(epoch),
	}
}

func zoneName(z int) string { return fmt.Sprintf("%s-%c", Region, 'a'+z) }

func node(i, zones int) *corev1.Node {
	name := fmt.Sprintf("node-%04d", i)
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: meta("", name, map[string]string{
			"kubernetes.io/hostname":           name,
			"kubernetes.io/os":                 "linux",
			"kubernetes.io/arch":               "amd64",
			"node.kubernetes.io/instance-type": "n2-standard-8",
			corev1.LabelTopologyRegion:         Region,
			corev1.LabelTopologyZone:           zoneName(i % zones),
		}),
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.64.%d.0/24", i%256), ProviderID: "bench://" + name},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("29Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.NewTime(epoch), LastTransitionTime: metav1.NewTime(epoch)}},
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("192.168.%d.%d", i>>8&255, i&255)}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.0", OperatingSystem: "linux", Architecture: "amd64", OSImage: "Ubuntu 24.04 LTS", KernelVersion: "6.8.0"},
		},
	}
	return n
}

func service(ns, name string, ip netip.Addr) *corev1.Service {
	tcp := corev1.ProtocolTCP
	local := corev1.ServiceInternalTrafficPolicyCluster
	single := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(ns, name, map[string]string{"app": name, "app.kubernetes.io/part-of": "bench"}),
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  ip.String(),
			ClusterIPs: []string{ip.String()},
			Selector:   map[string]string{"app": name},
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: tcp, Port: HTTPPort, TargetPort: intstr.FromInt32(HTTPTargetPort)},
				{Name: "grpc", Protocol: tcp, Port: GRPCPort, TargetPort: intstr.FromString("grpc")},
			},
			SessionAffinity:       corev1.ServiceAffinityNone,
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        &single,
			InternalTrafficPolicy: &local,
		},
	}
}

func newPod(ns, svc string, j int, ip netip.Addr, n *corev1.Node, zones int) *corev1.Pod {
	name := fmt.Sprintf("%s-7d9f8c6b5-%05d", svc, j)
	t := metav1.NewTime(epoch)
	yes := true
	grace := int64(30)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: uid("Pod", ns, name), CreationTimestamp: t,
			GenerateName: svc + "-7d9f8c6b5-",
			Labels: map[string]string{
				"app": svc, "version": "v1", "pod-template-hash": "7d9f8c6b5",
				"security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": svc,
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": "app",
				"prometheus.io/scrape":                    "true",
				"prometheus.io/port":                      "15020",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: svc + "-7d9f8c6b5", UID: uid("ReplicaSet", ns, svc), Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: corev1.PodSpec{
			NodeName:           n.Name,
			ServiceAccountName: svc,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.example/bench/" + svc + ":1.0.0",
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: HTTPTargetPort, Protocol: corev1.ProtocolTCP},
					{Name: "grpc", ContainerPort: GRPCPort, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "SERVICE_NAME", Value: svc},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			Volumes:                       []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SchedulerName:                 corev1.DefaultSchedulerName,
			TerminationGracePeriodSeconds: &grace,
			Tolerations:                   []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			HostIP:    n.Status.Addresses[0].Address,
			PodIP:     ip.String(),
			PodIPs:    []corev1.PodIP{{IP: ip.String()}},
			QOSClass:  corev1.PodQOSBurstable,
			StartTime: &t,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Started: &yes,
				Image: "registry.example/bench/" + svc + ":1.0.0", ImageID: "registry.example/bench/" + svc + "@sha256:0123456789abcdef",
				ContainerID: "containerd://" + string(uid("c", ns, name)),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
			}},
		},
	}
}

func sliceEndpoint(p *corev1.Pod, nodeIdx, zones int) discoveryv1.Endpoint {
	yes, no := true, false
	node := p.Spec.NodeName
	zone := zoneName(nodeIdx % zones)
	return discoveryv1.Endpoint{
		Addresses:  []string{p.Status.PodIP},
		Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
		NodeName:   &node,
		Zone:       &zone,
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
	}
}

func slice(ns, svc string, k int, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	http, grpc := "http", "grpc"
	hp, gp := int32(HTTPTargetPort), int32(GRPCPort)
	tcp := corev1.ProtocolTCP
	name := fmt.Sprintf("%s-%05x", svc, k)
	yes := true
	m := meta(ns, name, map[string]string{
		discoveryv1.LabelServiceName: svc,
		discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
		"app":                        svc,
	})
	m.GenerateName = svc + "-"
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc, UID: uid("", ns, svc), Controller: &yes, BlockOwnerDeletion: &yes}}
	return &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  m,
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   append([]discoveryv1.Endpoint(nil), eps...),
		Ports: []discoveryv1.EndpointPort{
			{Name: &http, Port: &hp, Protocol: &tcp},
			{Name: &grpc, Port: &gp, Protocol: &tcp},
		},
	}
}

func serviceEntry(ns, svc string) *networkingv1.ServiceEntry {
	return &networkingv1.ServiceEntry{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry"},
		ObjectMeta: meta(ns, svc+"-mesh", map[string]string{"app": svc}),
		Spec: networkingapiv1.ServiceEntry{
			Hosts:            []string{svc + ".mesh.example"},
			Ports:            []*networkingapiv1.ServicePort{{Number: HTTPPort, Name: "http", Protocol: "HTTP", TargetPort: HTTPTargetPort}, {Number: GRPCPort, Name: "grpc", Protocol: "GRPC"}},
			Location:         networkingapiv1.ServiceEntry_MESH_INTERNAL,
			Resolution:       networkingapiv1.ServiceEntry_STATIC,
			WorkloadSelector: &networkingapiv1.WorkloadSelector{Labels: map[string]string{"app": svc}},
		},
	}
}
