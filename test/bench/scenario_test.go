package bench_test

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshreg/meshreg/test/bench"
)

func TestGenerateDeterministic(t *testing.T) {
	c := bench.Config{Services: 30, EndpointsPerService: 7, ServicesPerNamespace: 4}
	a, b := bench.Generate(c), bench.Generate(c)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two generations of one config differ")
	}
}

func TestGenerateShape(t *testing.T) {
	c := bench.Config{Services: 7, EndpointsPerService: 250, ServicesPerNamespace: 3, PodsPerNode: 100, Zones: 2}
	s := bench.Generate(c)
	got := s.Counts()
	want := bench.Counts{
		Namespaces: 3, Nodes: 18, Zones: 2, Services: 7, Ports: 14,
		Pods: 1750, Slices: 21, SliceEndpoints: 1750, ServiceEntries: 1,
	}
	if got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	pods := map[string]*corev1.Pod{}
	ips := map[string]bool{}
	for _, p := range s.Pods {
		pods[p.Namespace+"/"+p.Name] = p
		if ips[p.Status.PodIP] {
			t.Fatalf("pod IP %s used twice", p.Status.PodIP)
		}
		ips[p.Status.PodIP] = true
	}
	nodes := map[string]*corev1.Node{}
	for _, n := range s.Nodes {
		nodes[n.Name] = n
	}
	perService := map[string]int{}
	for _, sl := range s.Slices {
		if n := len(sl.Endpoints); n == 0 || n > 100 {
			t.Errorf("slice %s has %d endpoints, want 1..100", sl.Name, n)
		}
		if sl.AddressType != discoveryv1.AddressTypeIPv4 || len(sl.Ports) != 2 {
			t.Errorf("slice %s: address type %s, %d ports", sl.Name, sl.AddressType, len(sl.Ports))
		}
		svc := sl.Labels[discoveryv1.LabelServiceName]
		for _, ep := range sl.Endpoints {
			perService[sl.Namespace+"/"+svc]++
			p := pods[ep.TargetRef.Namespace+"/"+ep.TargetRef.Name]
			if p == nil {
				t.Fatalf("slice %s names unknown pod %s", sl.Name, ep.TargetRef.Name)
			}
			if p.Status.PodIP != ep.Addresses[0] || p.Labels["app"] != svc || p.Namespace != sl.Namespace {
				t.Errorf("slice %s endpoint %v does not match pod %s", sl.Name, ep.Addresses, p.Name)
			}
			n := nodes[*ep.NodeName]
			if n == nil || n.Name != p.Spec.NodeName || n.Labels[corev1.LabelTopologyZone] != *ep.Zone {
				t.Errorf("endpoint %v: node/zone disagree with pod %s", ep.Addresses, p.Name)
			}
		}
	}
	for _, svc := range s.Services {
		if n := perService[svc.Namespace+"/"+svc.Name]; n != c.EndpointsPerService {
			t.Errorf("service %s/%s has %d endpoints, want %d", svc.Namespace, svc.Name, n, c.EndpointsPerService)
		}
		if len(svc.Spec.Ports) != 2 || svc.Spec.Selector["app"] != svc.Name {
			t.Errorf("service %s: ports %v selector %v", svc.Name, svc.Spec.Ports, svc.Spec.Selector)
		}
	}
	for _, se := range s.ServiceEntries {
		if se.Spec.WorkloadSelector == nil || len(se.Spec.Ports) != 2 {
			t.Errorf("service entry %s: selector %v ports %v", se.Name, se.Spec.WorkloadSelector, se.Spec.Ports)
		}
	}
	if n := len(s.KubeObjects()); n != 3+18+7+1750+21 {
		t.Errorf("KubeObjects has %d objects", n)
	}
}

func TestPresets(t *testing.T) {
	for name, want := range map[string]int{"small": 2000, "medium": 50000, "large": 100000, "xl": 500000} {
		if got := bench.Presets[name].Endpoints(); got != want {
			t.Errorf("preset %s: %d endpoints, want %d", name, got, want)
		}
	}
	if len(bench.PresetNames) != len(bench.Presets) {
		t.Errorf("PresetNames lists %d presets, Presets has %d", len(bench.PresetNames), len(bench.Presets))
	}
}

func TestAddressesDistinct(t *testing.T) {
	seen := map[netip.Addr]int{}
	for n := range 600000 {
		a := bench.PodIP(n)
		if prev, ok := seen[a]; ok {
			t.Fatalf("PodIP(%d) = PodIP(%d) = %s", n, prev, a)
		}
		seen[a] = n
	}
	vips := map[netip.Addr]bool{}
	for i := range 20000 {
		a := bench.ServiceIP(i)
		if _, pod := seen[a]; pod || vips[a] {
			t.Fatalf("ServiceIP(%d) = %s collides", i, a)
		}
		vips[a] = true
	}
}
