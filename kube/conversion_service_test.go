package kube

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshreg/meshreg/model"
)

var testServiceConfig = serviceConfig{cluster: "c1", domainSuffix: "cluster.local", trustDomain: "td.example"}

func TestConvertService(t *testing.T) {
	local := corev1.ServiceInternalTrafficPolicyLocal
	tests := []struct {
		name      string
		svc       *corev1.Service
		want      func(s *model.Service)
		wantDiags []string
	}{{
		name: "cluster IP with ports and detection",
		svc: &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "a"}},
			Spec: corev1.ServiceSpec{
				ClusterIP: "10.0.0.1", ClusterIPs: []string{"10.0.0.1", "fd00::1"},
				Selector: map[string]string{"app": "a"},
				Ports: []corev1.ServicePort{
					{Name: "http-web", Port: 80, TargetPort: intstr.FromString("web")},
					{Name: "grpc", Port: 90, AppProtocol: ptr("kubernetes.io/h2c"), TargetPort: intstr.FromInt32(9090)},
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
					{Name: "db", Port: 3306},
				},
			},
		},
		want: func(s *model.Service) {
			s.Labels = map[string]string{"app": "a"}
			s.Selector = map[string]string{"app": "a"}
			s.Addresses = map[model.ClusterID][]netip.Prefix{"c1": {netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("fd00::1/128")}}
			s.Ports = []model.Port{
				{Name: "http-web", Port: 80, Protocol: model.HTTP, TargetPortName: "web"},
				{Name: "grpc", Port: 90, Protocol: model.HTTP2, TargetPort: 9090},
				{Name: "dns", Port: 53, Protocol: model.UDP},
				{Name: "db", Port: 3306, Protocol: model.TCP},
			}
		},
	}, {
		name: "headless is passthrough",
		svc:  &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Spec: corev1.ServiceSpec{ClusterIP: "None", ClusterIPs: []string{"None"}}},
		want: func(s *model.Service) { s.Resolution = model.Passthrough },
	}, {
		name: "external name is an alias",
		svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", ClusterIP: "10.0.0.9"}},
		want: func(s *model.Service) {
			s.Resolution, s.MeshExternal, s.ExternalName = model.Alias, true, "db.example.com"
		},
	}, {
		name: "load balancer, node port, external IPs",
		svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1", ExternalIPs: []string{"1.2.3.4", "5.6.7.8"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
				{IP: "5.6.7.8"}, {Hostname: "lb.example.com"}, {IP: "9.9.9.9", Hostname: "ignored.example.com"}}}}},
		want: func(s *model.Service) {
			s.Addresses = map[model.ClusterID][]netip.Prefix{"c1": {netip.MustParsePrefix("10.0.0.1/32")}}
			s.Ports = []model.Port{{Name: "http", Port: 80, Protocol: model.HTTP, NodePort: 30080}}
			s.ExternalAddresses = map[model.ClusterID][]string{"c1": {"5.6.7.8", "lb.example.com", "9.9.9.9", "1.2.3.4"}}
		},
	}, {
		name: "annotations, policies, empty selector",
		svc: &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Annotations: map[string]string{
				annotationExportTo:                  " b, ., a,,b",
				annotationCanonicalServiceAccounts:  "z@example.com,spiffe://other/ns/x/sa/y",
				annotationKubernetesServiceAccounts: "sa1, sa1",
			}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{}, InternalTrafficPolicy: &local,
				TrafficDistribution: ptr("PreferClose"), PublishNotReadyAddresses: true},
		},
		want: func(s *model.Service) {
			s.ExportTo = []string{".", "a", "b"}
			s.ServiceAccounts = []string{"spiffe://other/ns/x/sa/y", "spiffe://td.example/ns/ns/sa/sa1", "z@example.com"}
			s.InternalTrafficPolicyLocal, s.TrafficDistribution, s.PublishNotReadyAddresses = true, model.TrafficPreferSameZone, true
		},
	}, {
		name: "bad ports and IPs are dropped with diagnostics",
		svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"},
			Spec: corev1.ServiceSpec{ClusterIPs: []string{"10.0.0.1", "not-an-ip"}, Ports: []corev1.ServicePort{
				{Name: "a", Port: 80},
				{Name: "b", Port: 80},                               // duplicate number
				{Name: "a", Port: 81},                               // duplicate name
				{Name: "c", Port: 0},                                // out of range
				{Name: "d", Port: 80, Protocol: corev1.ProtocolUDP}, // same number, other transport: kept
				{Name: "e", Port: 82, Protocol: "FOO"},              // unknown protocol: TCP
			}}},
		want: func(s *model.Service) {
			s.Addresses = map[model.ClusterID][]netip.Prefix{"c1": {netip.MustParsePrefix("10.0.0.1/32")}}
			s.Ports = []model.Port{{Name: "a", Port: 80, Protocol: model.Unsupported}, {Name: "d", Port: 80, Protocol: model.UDP},
				{Name: "e", Port: 82, Protocol: model.Unsupported}}
		},
		wantDiags: []string{"duplicate port 80/TCP", "duplicate port name \"a\"", "out of range", "unknown protocol \"FOO\"", "malformed cluster IP \"not-an-ip\""},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := &model.Service{
				Hostname:  model.Hostname(tt.svc.Name + "." + tt.svc.Namespace + ".svc.cluster.local"),
				Namespace: tt.svc.Namespace, Name: tt.svc.Name, Provider: model.Kubernetes,
			}
			tt.want(want)
			got, diags := convertService(tt.svc, "", testServiceConfig)
			if !got.Equals(want) {
				t.Errorf("convertService mismatch (-want +got):\n%s", cmp.Diff(want, got))
			}
			if len(diags) != len(tt.wantDiags) {
				t.Errorf("got %d diagnostics, want %d: %v", len(diags), len(tt.wantDiags), diags)
			}
			for _, w := range tt.wantDiags {
				if !slices.ContainsFunc(diags, func(d model.Diagnostic) bool { return strings.Contains(d.Message, w) }) {
					t.Errorf("no diagnostic containing %q in %v", w, diags)
				}
			}
			for _, d := range diags {
				if d.Kind != "Service" || d.Name != tt.svc.Name || d.Cluster != "c1" {
					t.Errorf("diagnostic does not name the service: %v", d)
				}
			}
		})
	}
}

// FuzzConvertService checks that any Service converts without panicking,
// keeps only valid, unique ports and parses only valid VIPs.
func FuzzConvertService(f *testing.F) {
	f.Add("a", "ns", "10.0.0.1", "http", int32(80), "TCP", "", "web", "", "ClusterIP", "a,b")
	f.Add("b", "ns", "None", "grpc-x", int32(0), "UDP", "kubernetes.io/ws", "", "sa", "ExternalName", "~")
	f.Add("", "", "::ffff:1.2.3.4", "", int32(-1), "SCTP", "tls", "8080", "a,,b", "LoadBalancer", "")
	f.Add("c", "ns", "fe80::1%eth0", "tcp", int32(65536), "BAD", "HTTP", "x", ",", "NodePort", ".")
	f.Fuzz(func(t *testing.T, name, ns, clusterIP, portName string, port int32, proto, appProto, target, sas, typ, exportTo string) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
				annotationKubernetesServiceAccounts: sas, annotationExportTo: exportTo}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceType(typ), ClusterIP: clusterIP, ClusterIPs: []string{clusterIP, clusterIP},
				Ports: []corev1.ServicePort{
					{Name: portName, Port: port, Protocol: corev1.Protocol(proto), AppProtocol: &appProto, TargetPort: intstr.Parse(target)},
					{Name: portName, Port: port},
				}},
		}
		got, _ := convertService(svc, "", testServiceConfig)
		if got == nil {
			t.Fatal("nil service")
		}
		if len(got.Ports) > 1 {
			t.Errorf("duplicate ports kept: %v", got.Ports)
		}
		for _, p := range got.Ports {
			if p.Port < 1 || p.Port > 65535 {
				t.Errorf("invalid port kept: %v", p)
			}
		}
		for _, vips := range got.Addresses {
			if len(vips) > 1 {
				t.Errorf("duplicate VIPs: %v", vips)
			}
			for _, v := range vips {
				if !v.IsValid() || !v.IsSingleIP() {
					t.Errorf("bad VIP %v", v)
				}
			}
		}
		if !slices.IsSorted(got.ExportTo) || !slices.IsSorted(got.ServiceAccounts) {
			t.Errorf("unsorted lists: %v %v", got.ExportTo, got.ServiceAccounts)
		}
	})
}
