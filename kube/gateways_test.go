package kube

import (
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

func gatewaySvc(name, network string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	svc := svcObj("istio-system", name, "10.96.0.1", nil, ports...)
	svc.Spec.Type = typ
	if network != "" {
		svc.Labels = map[string]string{labelNetwork: network}
	}
	return svc
}

func withIngress(svc *corev1.Service, ing ...corev1.LoadBalancerIngress) *corev1.Service {
	svc.Status.LoadBalancer.Ingress = ing
	return svc
}

func nodePortOf(name string, port, nodePort int32) corev1.ServicePort {
	p := svcPort(name, port)
	p.NodePort = nodePort
	return p
}

func externalNode(name, ip string, labels map[string]string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: ip}}
	}
	return n
}

func TestServiceGateways(t *testing.T) {
	gw := func(network, addr string, port, hbone uint32) model.NetworkGateway {
		return model.NetworkGateway{Network: model.NetworkID(network), Cluster: "c1", Address: addr, Port: port, HBONEPort: hbone, Source: model.GatewayFromService}
	}
	nodes := map[string]gatewayNode{
		"a": {labels: map[string]string{"gw": "yes"}, address: "5.5.5.5"},
		"b": {labels: map[string]string{"gw": "no"}, address: "6.6.6.6"},
	}
	tls, hbone := svcPort("tls", 15443), svcPort("hbone", 15008)
	tests := []struct {
		name  string
		svc   *corev1.Service
		named []model.NetworkGateway
		want  []model.NetworkGateway
		diag  string // a substring of the one diagnostic, "" for none
	}{
		{
			name: "no label, not named",
			svc:  withIngress(gatewaySvc("s", "", corev1.ServiceTypeLoadBalancer, tls), corev1.LoadBalancerIngress{IP: "1.1.1.1"}),
		},
		{
			name: "LoadBalancer IP, else host name, then externalIPs",
			svc: func() *corev1.Service {
				s := withIngress(gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, tls, hbone),
					corev1.LoadBalancerIngress{IP: "1.1.1.1", Hostname: "ignored.example.com"}, corev1.LoadBalancerIngress{Hostname: "gw.example.com"})
				s.Spec.ExternalIPs = []string{"3.3.3.3"}
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "1.1.1.1", 15443, 15008), gw("n1", "gw.example.com", 15443, 15008), gw("n1", "3.3.3.3", 15443, 15008)},
		},
		{
			name: "pending LoadBalancer",
			svc:  gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, tls),
			diag: "has no address",
		},
		{
			name: "gatewayPort label",
			svc: func() *corev1.Service {
				s := withIngress(gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, svcPort("tls", 16443), tls), corev1.LoadBalancerIngress{IP: "1.1.1.1"})
				s.Labels[labelGatewayPort] = "16443"
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "1.1.1.1", 16443, 0)},
		},
		{
			name: "unreadable gatewayPort label",
			svc: func() *corev1.Service {
				s := withIngress(gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, tls), corev1.LoadBalancerIngress{IP: "1.1.1.1"})
				s.Labels[labelGatewayPort] = "abc"
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "1.1.1.1", 15443, 0)},
			diag: "is not a port number",
		},
		{
			name: "neither port",
			svc:  withIngress(gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, svcPort("http", 80)), corev1.LoadBalancerIngress{IP: "1.1.1.1"}),
			diag: "neither port 15443 nor port 15008",
		},
		{
			name: "HBONE only",
			svc:  withIngress(gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, hbone), corev1.LoadBalancerIngress{IP: "1.1.1.1"}),
			want: []model.NetworkGateway{gw("n1", "1.1.1.1", 0, 15008)},
		},
		{
			name: "NodePort: selected nodes, node ports",
			svc: func() *corev1.Service {
				s := gatewaySvc("s", "n1", corev1.ServiceTypeNodePort, nodePortOf("tls", 15443, 31443), nodePortOf("hbone", 15008, 31008))
				s.Annotations = map[string]string{annotationNodeSelector: `{"gw":"yes"}`}
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "5.5.5.5", 31443, 31008)},
		},
		{
			name: "NodePort: node port not allocated",
			svc: func() *corev1.Service {
				s := gatewaySvc("s", "n1", corev1.ServiceTypeNodePort, tls)
				s.Annotations = map[string]string{annotationNodeSelector: `{"gw":"yes"}`}
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "5.5.5.5", 15443, 0)},
		},
		{
			name: "NodePort: unreadable selector selects every node",
			svc: func() *corev1.Service {
				s := gatewaySvc("s", "n1", corev1.ServiceTypeNodePort, nodePortOf("tls", 15443, 31443))
				s.Annotations = map[string]string{annotationNodeSelector: `notjson`}
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "5.5.5.5", 31443, 0), gw("n1", "6.6.6.6", 31443, 0)},
			diag: "is not a JSON label map",
		},
		{
			name: "NodePort: no node selected",
			svc: func() *corev1.Service {
				s := gatewaySvc("s", "n1", corev1.ServiceTypeNodePort, nodePortOf("tls", 15443, 31443))
				s.Annotations = map[string]string{annotationNodeSelector: `{"gw":"maybe"}`}
				return s
			}(),
			diag: "selects no node",
		},
		{
			name: "NodePort with externalIPs: those, on the node ports",
			svc: func() *corev1.Service {
				s := gatewaySvc("s", "n1", corev1.ServiceTypeNodePort, nodePortOf("tls", 15443, 31443))
				s.Annotations = map[string]string{annotationNodeSelector: `{}`}
				s.Spec.ExternalIPs = []string{"8.8.8.8"}
				return s
			}(),
			want: []model.NetworkGateway{gw("n1", "8.8.8.8", 31443, 0)},
		},
		{
			name: "NodePort without the annotation: not reached at nodes",
			svc:  gatewaySvc("s", "n1", corev1.ServiceTypeNodePort, nodePortOf("tls", 15443, 31443)),
			diag: "has no address",
		},
		{
			name: "named by the mesh networks",
			svc:  withIngress(gatewaySvc("s", "", corev1.ServiceTypeLoadBalancer, tls), corev1.LoadBalancerIngress{IP: "1.1.1.1"}),
			named: []model.NetworkGateway{
				{Network: "m1", Cluster: "c1", Port: 15443, Source: model.GatewayFromMeshNetworks},
				{Network: "m2", Cluster: "c1", Port: 16000, Source: model.GatewayFromMeshNetworks},
			},
			want: []model.NetworkGateway{
				{Network: "m1", Cluster: "c1", Address: "1.1.1.1", Port: 15443, Source: model.GatewayFromMeshNetworks},
				{Network: "m2", Cluster: "c1", Address: "1.1.1.1", Port: 16000, Source: model.GatewayFromMeshNetworks},
			},
		},
		{
			name:  "the network label wins over the mesh networks' name",
			svc:   withIngress(gatewaySvc("s", "n1", corev1.ServiceTypeLoadBalancer, tls), corev1.LoadBalancerIngress{IP: "1.1.1.1"}),
			named: []model.NetworkGateway{{Network: "m1", Cluster: "c1", Port: 15443, Source: model.GatewayFromMeshNetworks}},
			want:  []model.NetworkGateway{gw("n1", "1.1.1.1", 15443, 0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := serviceGateways(tt.svc, "c1", tt.named, nodes)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("gateways (-want +got):\n%s", diff)
			}
			switch {
			case tt.diag == "" && len(diags) > 0:
				t.Errorf("unexpected diagnostics: %v", diags)
			case tt.diag != "" && (len(diags) != 1 || !strings.Contains(diags[0].Message, tt.diag)):
				t.Errorf("diagnostics %v, want one containing %q", diags, tt.diag)
			case tt.diag != "" && (diags[0].Kind != "Service" || diags[0].Name != "s" || diags[0].Namespace != "istio-system"):
				t.Errorf("diagnostic %v does not name the Service", diags[0])
			}
		})
	}
}

// gatewayRecorder records the gateway events of a subscription.
type gatewayRecorder struct {
	recorder
	gmu      sync.Mutex
	gateways [][]model.NetworkGateway
}

func (r *gatewayRecorder) OnNetworkGateways(e registry.NetworkGatewaysEvent) {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	r.gateways = append(r.gateways, e.Gateways)
}

func (r *gatewayRecorder) takeGateways() [][]model.NetworkGateway {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	out := r.gateways
	r.gateways = nil
	return out
}

// TestControllerGatewaysFollowObjects: a gateway appears when its
// Service gets an address, follows its node, and goes with its Service;
// each change is one event with the whole list, and changes to other
// objects publish none.
func TestControllerGatewaysFollowObjects(t *testing.T) {
	np := gatewaySvc("np", "n2", corev1.ServiceTypeNodePort, nodePortOf("tls", 15443, 31443))
	np.Annotations = map[string]string{annotationNodeSelector: `{"gw":"yes"}`}
	f := newFakeCluster(
		gatewaySvc("lb", "n1", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)),
		np,
		externalNode("node-1", "5.5.5.5", map[string]string{"gw": "yes"}),
		svcObj("default", "app", "10.96.0.9", nil, svcPort("http", 80)),
	)
	c := startController(t, f, Options{ClusterID: "c1"})
	rec := &gatewayRecorder{}
	unsub := c.Subscribe(rec)
	defer unsub()

	nodeGW := model.NetworkGateway{Network: "n2", Cluster: "c1", Address: "5.5.5.5", Port: 31443, Source: model.GatewayFromService}
	lbGW := model.NetworkGateway{Network: "n1", Cluster: "c1", Address: "1.1.1.1", Port: 15443, Source: model.GatewayFromService}
	waitGateways := func(what string, want ...model.NetworkGateway) {
		t.Helper()
		waitFor(t, what, func() bool {
			evs := rec.takeGateways()
			if len(evs) == 0 {
				return false
			}
			if len(evs) != 1 || !cmp.Equal(evs[0], want, cmpopts.EquateEmpty()) {
				t.Fatalf("%s: gateway events %v, want one with %v", what, evs, want)
			}
			return true
		})
		if got := c.NetworkGateways(); !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
			t.Fatalf("%s: NetworkGateways() = %v, want %v", what, got, want)
		}
	}
	waitGateways("the initial gateways", nodeGW)
	if d := diagnosticsAbout(c, "lb"); !strings.Contains(d, "has no address") {
		t.Errorf("pending LoadBalancer: diagnostics %q", d)
	}

	lb := withIngress(gatewaySvc("lb", "n1", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)), corev1.LoadBalancerIngress{IP: "1.1.1.1"})
	_, err := f.CoreV1().Services("istio-system").UpdateStatus(ctx, lb, metav1.UpdateOptions{})
	mustNot(t, err)
	waitGateways("the LoadBalancer's address", lbGW, nodeGW)
	if d := diagnosticsAbout(c, "lb"); d != "" {
		t.Errorf("diagnostics left after the address came: %q", d)
	}

	// A node label the selector does not read, and an unrelated Service:
	// no gateway event. The node's external IP: one.
	_, err = f.CoreV1().Nodes().Update(ctx, externalNode("node-1", "5.5.5.5", map[string]string{"gw": "yes", "other": "x"}), metav1.UpdateOptions{})
	mustNot(t, err)
	_, err = f.CoreV1().Services("default").Update(ctx, svcObj("default", "app", "10.96.0.9", map[string]string{"a": "b"}, svcPort("http", 80)), metav1.UpdateOptions{})
	mustNot(t, err)
	_, err = f.CoreV1().Nodes().Update(ctx, externalNode("node-1", "5.5.5.6", map[string]string{"gw": "yes", "other": "x"}), metav1.UpdateOptions{})
	mustNot(t, err)
	nodeGW.Address = "5.5.5.6"
	waitGateways("the node's new address", lbGW, nodeGW)

	// The address going away withdraws the gateway.
	_, err = f.CoreV1().Services("istio-system").UpdateStatus(ctx, gatewaySvc("lb", "n1", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)), metav1.UpdateOptions{})
	mustNot(t, err)
	waitGateways("the LoadBalancer's address withdrawn", nodeGW)

	mustNot(t, f.CoreV1().Services("istio-system").Delete(ctx, "np", metav1.DeleteOptions{}))
	waitGateways("the NodePort Service deleted")

	// A late subscriber gets no gateways event for an empty list, then
	// the list when it changes.
	late := &gatewayRecorder{}
	defer c.Subscribe(late)()
	_, err = f.CoreV1().Services("istio-system").UpdateStatus(ctx, lb, metav1.UpdateOptions{})
	mustNot(t, err)
	waitGateways("the address again", lbGW)
	waitFor(t, "the late subscriber's event", func() bool {
		late.gmu.Lock()
		defer late.gmu.Unlock()
		return len(late.gateways) > 0
	})
	if evs := late.takeGateways(); len(evs) != 1 || !cmp.Equal(evs[0], []model.NetworkGateway{lbGW}) {
		t.Errorf("late subscriber: gateway events %v", evs)
	}
}

// TestGatewaysReplayedToNewSubscriber: a subscriber gets the current
// gateways, marked Initial.
func TestGatewaysReplayedToNewSubscriber(t *testing.T) {
	f := newFakeCluster(withIngress(gatewaySvc("lb", "n1", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)), corev1.LoadBalancerIngress{IP: "1.1.1.1"}))
	c := startController(t, f, Options{ClusterID: "c1"})
	var mu sync.Mutex
	var got []registry.NetworkGatewaysEvent
	defer c.Subscribe(registry.HandlerFuncs{NetworkGatewaysFunc: func(e registry.NetworkGatewaysEvent) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
	}})()
	waitFor(t, "the replayed gateways", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1
	})
	mu.Lock()
	defer mu.Unlock()
	if !got[0].Initial || len(got[0].Gateways) != 1 || got[0].Gateways[0].Address != "1.1.1.1" {
		t.Errorf("replayed %+v", got[0])
	}
}

// diagnosticsAbout returns the messages of the controller's diagnostics
// about a Service of istio-system, joined.
func diagnosticsAbout(c *Controller, name string) string {
	var out []string
	for _, d := range c.Diagnostics() {
		if d.Kind == "Service" && d.Namespace == "istio-system" && d.Name == name {
			out = append(out, d.Message)
		}
	}
	return strings.Join(out, "; ")
}

// TestControllerMeshNetworks: mesh networks set while running give the
// cluster's endpoints the network whose endpoints come from its
// registry, range the others, and make the Service they name a gateway;
// cleared, they take all of it back.
func TestControllerMeshNetworks(t *testing.T) {
	f := newFakeCluster(
		withIngress(gatewaySvc("eastwest", "", corev1.ServiceTypeLoadBalancer, svcPort("tls", 15443)), corev1.LoadBalancerIngress{IP: "1.2.3.4"}),
		svcObj("default", "app", "10.96.0.9", nil, svcPort("http", 80)),
		sliceObj("default", "app-1", "app", "IPv4", 8080, sliceEP{"10.20.0.5", "", true}),
	)
	c := startController(t, f, Options{ClusterID: "c1"})
	key := skey("default", "app")
	network := func() model.NetworkID {
		eps := c.Endpoints(key, registry.EndpointQuery{})
		if len(eps) != 1 {
			return "?"
		}
		return eps[0].Network
	}
	if n := network(); n != "" {
		t.Fatalf("network before mesh networks: %q", n)
	}

	c.SetMeshNetworks(&model.MeshNetworks{Networks: map[model.NetworkID]model.MeshNetwork{
		"net-a": {
			Endpoints: []model.MeshNetworkEndpoints{{FromRegistry: "c1"}},
			Gateways:  []model.MeshNetworkGateway{{RegistryServiceName: host("istio-system", "eastwest"), Port: 15443}},
		},
	}})
	waitFor(t, "the registry's network", func() bool { return network() == "net-a" && c.Network() == "net-a" })
	want := []model.NetworkGateway{{Network: "net-a", Cluster: "c1", Address: "1.2.3.4", Port: 15443, Source: model.GatewayFromMeshNetworks}}
	waitFor(t, "the named Service's gateway", func() bool { return cmp.Equal(c.NetworkGateways(), want) })

	c.SetMeshNetworks(&model.MeshNetworks{Networks: map[model.NetworkID]model.MeshNetwork{
		"net-r": {Endpoints: []model.MeshNetworkEndpoints{{FromCIDR: netip.MustParsePrefix("10.20.0.0/16")}}},
	}})
	waitFor(t, "the range's network", func() bool { return network() == "net-r" && len(c.NetworkGateways()) == 0 })
	c.SetMeshNetworks(nil)
	waitFor(t, "no network", func() bool { return network() == "" && c.Network() == "" })
}
