package proxyview

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/model"
)

func TestInbound(t *testing.T) {
	f := newFake()
	reviews := f.add(kube("reviews", "a"), ep("10.0.0.1", on("", "c1")), ep("10.1.0.1", on("", "c2")))
	reviews.Ports = append(reviews.Ports, model.Port{Name: "grpc", Port: 90})
	f.endpoints[reviews.Key()] = append(f.endpoints[reviews.Key()], ep("10.0.0.1", on("", "c1"), func(e *model.Endpoint) { e.ServicePortName, e.Port = "grpc", 9090 }))
	// A hostile tenant lists the victim's pod IP in its own services.
	hijack := f.add(kube("hijack", "evil"), ep("10.0.0.1", on("", "c1")))
	entry := f.add(serviceEntry("vm.example.com", "a", 0), ep("10.1.0.1", on("", "c2")))
	// The ClusterSet host shares the Service's endpoints; it is no target.
	set := kube("reviews", "a")
	set.Hostname = model.ClusterSetHostname("reviews", "a")
	f.add(set, ep("10.0.0.1", on("", "c1")))
	v := f.view(t, Options{})

	targets := func(p *Proxy) []string {
		var out []string
		for _, t := range v.Inbound(p) {
			out = append(out, t.Service.Key().String()+":"+t.Port.Name+"->"+strconv.FormatUint(uint64(t.TargetPort), 10))
		}
		return out
	}
	tests := []struct {
		name  string
		proxy Proxy
		want  []string
	}{
		{name: "its namespace and cluster", proxy: Proxy{Namespace: "a", Cluster: "c1", IPs: ips("10.0.0.1")},
			want: []string{"a/reviews.a.svc.cluster.local:http->8080", "a/reviews.a.svc.cluster.local:grpc->9090"}},
		{name: "not another namespace's services at its IP", proxy: Proxy{Namespace: "evil", Cluster: "c1", IPs: ips("10.0.0.1")},
			want: []string{"evil/hijack.evil.svc.cluster.local:http->8080"}},
		{name: "a Kubernetes Service's endpoints of its cluster only; entries from any", proxy: Proxy{Namespace: "a", Cluster: "c1", IPs: ips("10.1.0.1")},
			want: []string{"a/vm.example.com:http->8080"}},
		{name: "no cluster: every cluster", proxy: Proxy{Namespace: "a", IPs: ips("10.1.0.1")},
			want: []string{"a/reviews.a.svc.cluster.local:http->8080", "a/vm.example.com:http->8080"}},
		{name: "no IPs", proxy: Proxy{Namespace: "a"}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, targets(&tt.proxy)); diff != "" {
				t.Errorf("Inbound (-want +got):\n%s", diff)
			}
		})
	}
	_, _ = hijack, entry
}
