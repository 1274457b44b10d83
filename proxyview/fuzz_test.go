package proxyview

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/model"
)

// FuzzView feeds odd options, exportTo values, hostnames and addresses to
// a view: New refuses or accepts the options, and no query panics.
func FuzzView(f *testing.F) {
	f.Add("*", "*.kube-system.svc.cluster.local", "istiod.istio-system.svc:15012", ".,~,ns", "x.ns.svc.cluster.local", "10.0.0.1", "ns")
	f.Add(".", "*", "[::1]:15012", "", "*.wild.com", "::ffff:10.0.0.1", "")
	f.Add("~", "**", "no-port", "*,~", "", "fe80::1%eth0", "a")
	f.Fuzz(func(t *testing.T, defaults, settingHost, discovery, exportTo, host, ip, ns string) {
		opts := Options{
			DefaultServiceExportTo: strings.Split(defaults, ","),
			ServiceSettings:        []ServiceSetting{{Hosts: []string{settingHost}, ClusterLocal: len(host)%2 == 0}},
			DiscoveryAddress:       discovery,
		}
		if _, err := opts.defaults(); err != nil {
			return // refused: New says why
		}
		src := newFake()
		svc := kube("a", ns)
		svc.Hostname = model.Hostname(host)
		if exportTo != "" {
			svc.ExportTo = strings.Split(exportTo, ",")
		}
		var eps []*model.Endpoint
		if a, err := netip.ParseAddr(ip); err == nil {
			eps = append(eps, &model.Endpoint{Addresses: []netip.Addr{a}, Port: 1, ServicePortName: "http", Network: "n2", TLSMode: model.TLSIstio})
			src.gateways = []model.NetworkGateway{{Network: "n2", Address: ip, Port: 15443}, {Network: "n1", Address: host, Port: 1}}
		}
		src.add(svc, eps...)
		v := src.view(t, opts)
		s := v.Snapshot()
		p := &Proxy{Namespace: ns, Network: "n1", IPs: []netip.Addr{netip.MustParseAddr("10.0.0.9")}}
		for _, v := range s.Services(p) {
			s.Addresses(p, v)
			s.Endpoints(p, v.Key(), "http")
		}
		s.ClusterLocal(svc.Hostname)
		s.Visible(svc, ns)
		v.Inbound(&Proxy{Namespace: ns, IPs: eps0(eps)})
	})
}

func eps0(eps []*model.Endpoint) []netip.Addr {
	if len(eps) == 0 {
		return nil
	}
	return eps[0].Addresses
}
