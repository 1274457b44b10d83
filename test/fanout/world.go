package fanout

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// SharedNamespace is the namespace whose Services every sidecar sees.
const SharedNamespace = "shared"

// World is the shape of a benchmark's world.
type World struct {
	// Namespaces is the number of namespaces besides the shared one,
	// each with Services Services.
	Namespaces, Services int
	// SharedServices is the number of Services in the shared namespace.
	SharedServices int
	// Endpoints is the number of Pods behind each Service.
	Endpoints int
}

// DefaultWorld is 100 namespaces of 10 Services and a shared namespace
// of 200, each Service with 5 Pods: 1,200 Services, 6,000 Pods; a
// sidecar sees 210 Services.
var DefaultWorld = World{Namespaces: 100, Services: 10, SharedServices: 200, Endpoints: 5}

// Namespace returns the name of namespace i.
func Namespace(i int) string { return fmt.Sprintf("ns-%d", i) }

// ServiceName returns the name of Service j of a namespace.
func ServiceName(j int) string { return fmt.Sprintf("svc-%d", j) }

// Hostname returns the hostname of a Service.
func Hostname(ns string, j int) string {
	return fmt.Sprintf("%s.%s.svc.cluster.local", ServiceName(j), ns)
}

// PodName returns the name of Pod k of Service j.
func PodName(j, k int) string { return fmt.Sprintf("%s-%d", ServiceName(j), k) }

// ServicePort is every Service's port; TargetPort its Pods' port.
const (
	ServicePort = 80
	TargetPort  = 8080
)

// nsSpec is one namespace of a world.
type nsSpec struct {
	name     string
	services int
	exportTo string
}

// namespaces returns the world's namespaces, the shared one last.
func (w World) namespaces() []nsSpec {
	var out []nsSpec
	for i := range w.Namespaces {
		out = append(out, nsSpec{Namespace(i), w.Services, ".," + SharedNamespace})
	}
	return append(out, nsSpec{SharedNamespace, w.SharedServices, "*"})
}

// podIP returns the IP of Pod k of Service j of the namespace at index
// n (the shared namespace is the last index).
func podIP(n, j, k, endpoints int) netip.Addr {
	i := (n*4096+j)*endpoints + k
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

// Objects returns the world's objects: per namespace the Namespace, then
// per Service the Service, its Pods and its EndpointSlice.
func (w World) Objects() []runtime.Object {
	var out []runtime.Object
	vip := 0
	for n, ns := range w.namespaces() {
		out = append(out, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns.name},
		})
		for j := range ns.services {
			vip++
			out = append(out, w.service(ns.name, ns.exportTo, j, netip.AddrFrom4([4]byte{10, 96, byte(vip >> 8), byte(vip)})))
			for k := range w.Endpoints {
				out = append(out, pod(ns.name, j, k, podIP(n, j, k, w.Endpoints), true))
			}
			out = append(out, w.slice(ns.name, n, j, -1))
		}
	}
	return out
}

func (w World) service(ns, exportTo string, j int, vip netip.Addr) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName(j), Namespace: ns,
			Annotations: map[string]string{"networking.istio.io/exportTo": exportTo}},
		Spec: corev1.ServiceSpec{
			ClusterIP:  vip.String(),
			ClusterIPs: []string{vip.String()},
			Selector:   map[string]string{"app": ServiceName(j)},
			Ports: []corev1.ServicePort{{
				Name: "http", Port: ServicePort, TargetPort: intstr.FromInt32(TargetPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

func pod(ns string, j, k int, ip netip.Addr, ready bool) *corev1.Pod {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: PodName(j, k), Namespace: ns,
			Labels: map[string]string{"app": ServiceName(j)}},
		Spec: corev1.PodSpec{
			NodeName:           "node-0",
			ServiceAccountName: "default",
			Containers:         []corev1.Container{{Name: "app", Image: "app"}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      ip.String(),
			PodIPs:     []corev1.PodIP{{IP: ip.String()}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
		},
	}
}

// slice returns the EndpointSlice of Service j of the namespace at index
// n, with its Pod unready not ready (-1 for none).
func (w World) slice(ns string, n, j, unready int) *discoveryv1.EndpointSlice {
	name, port, proto := "http", int32(TargetPort), corev1.ProtocolTCP
	s := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName(j) + "-0", Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: ServiceName(j)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}
	for k := range w.Endpoints {
		ready := k != unready
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{podIP(n, j, k, w.Endpoints).String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			NodeName:   ptr("node-0"),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: PodName(j, k)},
		})
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Unready returns the objects that make Pod 0 of shared Service j not
// ready: the Pod, and its Service's EndpointSlice with it not ready.
func (w World) Unready(j int) []runtime.Object {
	n := w.Namespaces // the shared namespace's index
	return []runtime.Object{
		pod(SharedNamespace, j, 0, podIP(n, j, 0, w.Endpoints), false),
		w.slice(SharedNamespace, n, j, 0),
	}
}

// UnreadyIP returns the IP of the Pod Unready(j) makes not ready.
func (w World) UnreadyIP(j int) netip.Addr { return podIP(w.Namespaces, j, 0, w.Endpoints) }

// AddedPort is the port that WithSecondPort adds.
const AddedPort = 81

// WithSecondPort returns shared Service j with a second port, AddedPort.
func (w World) WithSecondPort(j int) []runtime.Object {
	svc := w.service(SharedNamespace, "*", j, w.sharedVIP(j))
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
		Name: "http-2", Port: AddedPort, TargetPort: intstr.FromInt32(TargetPort), Protocol: corev1.ProtocolTCP,
	})
	return []runtime.Object{svc}
}

// sharedVIP returns the VIP of shared Service j, as Objects numbers them.
func (w World) sharedVIP(j int) netip.Addr {
	vip := w.Namespaces*w.Services + j + 1
	return netip.AddrFrom4([4]byte{10, 96, byte(vip >> 8), byte(vip)})
}

// WriteYAML writes objects as a multi-document YAML stream.
func WriteYAML(out io.Writer, objs []runtime.Object) error {
	var buf bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	_, err := out.Write(buf.Bytes())
	return err
}
