package reliability_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The isolation tests run through the real path (manifests →
// sources.Build → aggregate). That the debug server of examples/xds-server
// binds to loopback unless told otherwise is tested there:
// TestDefaultAddressesAreLoopback in examples/xds-server/flags_test.go.

const isolationManifests = `apiVersion: v1
kind: Namespace
metadata: {name: ns-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-b}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns-a, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  clusterIP: 10.96.0.10
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: pa, namespace: ns-a, labels: {app: web}}
spec: {serviceAccountName: web-sa, containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 10.1.0.1, podIPs: [{ip: 10.1.0.1}], conditions: [{type: Ready, status: "True"}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: ns-a, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
- {addresses: [10.1.0.1], conditions: {ready: true}, targetRef: {kind: Pod, namespace: ns-a, name: pa}}
---
apiVersion: v1
kind: Pod
metadata: {name: pb, namespace: ns-b, labels: {app: web}}
spec: {containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 10.1.0.2, podIPs: [{ip: 10.1.0.2}], conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-b, namespace: ns-b}
spec:
  clusterIP: 10.96.0.11
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
# Selects app=web: only pa (its own namespace), never pb.
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: selector, namespace: ns-a, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  hosts: [web.mesh.example]
  addresses: [240.0.0.1]
  resolution: STATIC
  exportTo: [".", "ns-b"]
  ports: [{name: http, number: 80, protocol: HTTP, targetPort: 8080}]
  workloadSelector: {labels: {app: web}}
---
# Takes the Kubernetes Service's hostname in the same namespace: loses.
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: takeover, namespace: ns-a, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  hosts: [web.ns-a.svc.cluster.local]
  addresses: [240.0.0.2]
  resolution: STATIC
  ports: [{name: http, number: 80, protocol: HTTP}]
  endpoints: [{address: 10.9.9.9}]
---
# The same hostname from another namespace, older than the Service: the
# Kubernetes Service still answers GetService.
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: elsewhere, namespace: ns-b, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  hosts: [web.ns-a.svc.cluster.local]
  addresses: [240.0.0.3]
  resolution: STATIC
  ports: [{name: http, number: 80, protocol: HTTP}]
  endpoints: [{address: 10.9.9.8}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: newer, namespace: ns-a, creationTimestamp: "2024-06-01T00:00:00Z"}
spec: {hosts: [shared.example.com], addresses: [240.0.1.1], resolution: STATIC, ports: [{name: http, number: 80, protocol: HTTP}], exportTo: ["~"]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: older, namespace: ns-b, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {hosts: [shared.example.com], addresses: [240.0.1.2], resolution: STATIC, ports: [{name: http, number: 80, protocol: HTTP}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: tie, namespace: ns-b, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {hosts: [tie.example.com], addresses: [240.0.2.1], resolution: STATIC, ports: [{name: http, number: 80, protocol: HTTP}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: tie, namespace: ns-a, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {hosts: [tie.example.com], addresses: [240.0.2.2], resolution: STATIC, ports: [{name: http, number: 80, protocol: HTTP}]}
---
# Reuses pa's IP from another namespace, with labels web-b selects.
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: thief, namespace: ns-b}
spec: {address: 10.1.0.1, labels: {app: web}, serviceAccount: thief}
---
# Reuses pa's IP in pa's own namespace: web selects it beside the pod's
# endpoint (a VM and a pod at one address, as in a migration), each with
# its own identity.
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: twin, namespace: ns-a}
spec: {address: 10.1.0.1, labels: {app: web}, serviceAccount: twin}
---
# A hostile tenant's selectorless Service with a slice of its own naming
# ns-a's pod: by IP alone, by a targetRef into ns-a, and its own
# hostNetwork agent's node IP. None of them lends identity to it.
apiVersion: v1
kind: Service
metadata: {name: grab, namespace: ns-b}
spec:
  clusterIP: 10.96.0.12
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: grab-1, namespace: ns-b, labels: {kubernetes.io/service-name: grab}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
- {addresses: [10.1.0.1], conditions: {ready: true}}
- {addresses: [10.1.0.3], conditions: {ready: true}, targetRef: {kind: Pod, namespace: ns-a, name: pc}}
- {addresses: [192.168.0.5], conditions: {ready: true}}
---
apiVersion: v1
kind: Pod
metadata: {name: pc, namespace: ns-a, labels: {app: web, security.istio.io/tlsMode: istio}}
spec: {serviceAccountName: web-sa, containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 10.1.0.3, podIPs: [{ip: 10.1.0.3}], conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: agent, namespace: ns-b, labels: {app: agent}}
spec: {serviceAccountName: agent, hostNetwork: true, containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 192.168.0.5, podIPs: [{ip: 192.168.0.5}], conditions: [{type: Ready, status: "True"}]}
`

func dumpService(d *registry.Dump, host, ns string) *registry.DumpService {
	for i := range d.Services {
		if d.Services[i].Hostname == host && d.Services[i].Namespace == ns {
			return &d.Services[i]
		}
	}
	return nil
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	d, _, disc := buildAndDump(t, isolationManifests, "", false)

	t.Run("workloadSelector stays in its namespace", func(t *testing.T) {
		s := dumpService(d, "web.mesh.example", "ns-a")
		if s == nil {
			t.Fatal("no ServiceEntry web.mesh.example")
		}
		var got []string
		for _, ep := range s.Endpoints {
			got = append(got, ep.Workload)
			if !strings.HasPrefix(ep.Workload, "ns-a/") {
				t.Errorf("selected %s from another namespace", ep.Workload)
			}
		}
		if !slices.Contains(got, "ns-a/pa") {
			t.Errorf("endpoints %v, want ns-a/pa among them", got)
		}
	})

	t.Run("exportTo carried exactly", func(t *testing.T) {
		for _, c := range []struct {
			host, ns string
			want     []string
		}{
			{"web.mesh.example", "ns-a", []string{".", "ns-b"}},
			{"shared.example.com", "ns-a", []string{"~"}},
			{"shared.example.com", "ns-b", []string{"*"}},
		} {
			s := dumpService(d, c.host, c.ns)
			if s == nil || !slices.Equal(s.ExportTo, c.want) {
				t.Errorf("%s/%s exportTo = %v, want %v", c.ns, c.host, s, c.want)
			}
			if svc := disc.ServiceByKey(model.ServiceKey{Namespace: c.ns, Hostname: model.Hostname(c.host)}); c.want[0] != "*" && (svc == nil || !slices.Equal(slices.Sorted(slices.Values(svc.ExportTo)), c.want)) {
				t.Errorf("%s/%s model exportTo = %v, want %v", c.ns, c.host, svc, c.want)
			}
		}
	})

	t.Run("a ServiceEntry cannot take over a Kubernetes hostname in its namespace", func(t *testing.T) {
		key := model.ServiceKey{Namespace: "ns-a", Hostname: "web.ns-a.svc.cluster.local"}
		svc := disc.ServiceByKey(key)
		if svc == nil || svc.Provider != model.Kubernetes {
			t.Fatalf("ServiceByKey = %+v, want the Kubernetes Service", svc)
		}
		n := 0
		for _, s := range disc.Services() {
			if s.Key() == key {
				n++
				if s.Provider != model.Kubernetes {
					t.Errorf("Services() lists the ServiceEntry for %s", key)
				}
			}
		}
		if n != 1 {
			t.Errorf("Services() lists %s %d times", key, n)
		}
		for _, ep := range disc.Endpoints(key, registry.EndpointQuery{}) {
			if ep.Address() == "10.9.9.9" {
				t.Error("the shadowed ServiceEntry's endpoint joined the Kubernetes Service")
			}
		}
		shadowed := false
		for _, g := range disc.Diagnostics() {
			if g.Kind == "ServiceEntry" && g.Namespace == "ns-a" && g.Name == "takeover" {
				shadowed = true
			}
		}
		if !shadowed {
			t.Error("no diagnostic for the shadowed ServiceEntry")
		}
	})

	t.Run("GetService across namespaces: Kubernetes, then oldest, then namespace/name", func(t *testing.T) {
		for _, c := range []struct{ host, wantNS, wantName string }{
			{"web.ns-a.svc.cluster.local", "ns-a", "web"}, // Kubernetes, though the ServiceEntry in ns-b is older
			{"shared.example.com", "ns-b", "older"},       // oldest
			{"tie.example.com", "ns-a", "tie"},            // same age: namespace/name
		} {
			s := disc.GetService(model.Hostname(c.host))
			if s == nil || s.Namespace != c.wantNS || s.Name != c.wantName {
				t.Errorf("GetService(%s) = %v, want %s/%s", c.host, s, c.wantNS, c.wantName)
			}
		}
	})

	t.Run("a slice of one namespace takes no identity from another's pods", func(t *testing.T) {
		grab := dumpService(d, "grab.ns-b.svc.cluster.local", "ns-b")
		if grab == nil || len(grab.Endpoints) != 3 {
			t.Fatalf("grab = %+v, want its 3 endpoints", grab)
		}
		for _, ep := range grab.Endpoints {
			if ep.Workload != "" || ep.ServiceAccount != "" || ep.TLSMode != "disabled" || ep.Labels["app"] != "" {
				t.Errorf("grab's endpoint %s took a workload's identity: %+v", ep.Address, ep)
			}
		}
		reported := false
		for _, g := range disc.Diagnostics() {
			if g.Kind == "EndpointSlice" && g.Namespace == "ns-b" && g.Name == "grab-1" && strings.Contains(g.Message, "ns-a/pc") {
				reported = true
			}
		}
		if !reported {
			t.Error("no diagnostic for grab-1's targetRef into ns-a")
		}
		// ns-a's own pod keeps its endpoint and identity in its Service.
		var pa bool
		for _, ep := range dumpService(d, "web.ns-a.svc.cluster.local", "ns-a").Endpoints {
			pa = pa || (ep.Workload == "ns-a/pa" && strings.HasSuffix(ep.ServiceAccount, "/ns/ns-a/sa/web-sa"))
		}
		if !pa {
			t.Error("ns-a/pa lost its endpoint in web")
		}
	})

	t.Run("a WorkloadEntry reusing a pod's IP cannot steal its identity", func(t *testing.T) {
		ip := netip.MustParseAddr("10.1.0.1")
		targets := disc.ProxyTargets(registry.ProxyQuery{Namespace: "ns-a", IPs: []netip.Addr{ip}})
		if len(targets) == 0 {
			t.Fatal("no proxy targets for the pod")
		}
		for _, tg := range targets {
			if tg.Service.Namespace != "ns-a" {
				t.Errorf("ns-a's pod IP has a target of %s/%s", tg.Service.Namespace, tg.Service.Hostname)
			}
		}
		for _, tg := range disc.ProxyTargets(registry.ProxyQuery{Namespace: "ns-b", IPs: []netip.Addr{ip}}) {
			if tg.Service.Namespace != "ns-b" {
				t.Errorf("ProxyTargets(ns-b) returned %s/%s", tg.Service.Namespace, tg.Service.Hostname)
			}
		}
		// web has the pod's endpoint and its own namespace's entry at
		// that address, each under its own identity; never the thief.
		web := dumpService(d, "web.ns-a.svc.cluster.local", "ns-a")
		var at []registry.DumpEndpoint
		for _, ep := range web.Endpoints {
			if ep.Address == "10.1.0.1" {
				at = append(at, ep)
			}
		}
		slices.SortFunc(at, func(a, b registry.DumpEndpoint) int { return strings.Compare(a.Workload, b.Workload) })
		if len(at) != 2 || at[0].Workload != "ns-a/pa" || !strings.HasSuffix(at[0].ServiceAccount, "/ns/ns-a/sa/web-sa") ||
			at[1].Workload != "ns-a/twin" || !strings.HasSuffix(at[1].ServiceAccount, "/ns/ns-a/sa/twin") {
			t.Errorf("web's endpoints at 10.1.0.1 = %+v, want the pod's and twin's, each with its identity", at)
		}
		// The thief serves web-b in its own namespace, under its own
		// identity, and no service of ns-a.
		servesWebB := false
		for _, s := range d.Services {
			for _, ep := range s.Endpoints {
				if ep.Workload == "ns-b/thief" && s.Name == "web-b" {
					servesWebB = true
				}
				if ep.Workload == "ns-b/thief" && s.Namespace != "ns-b" {
					t.Errorf("ns-b/thief is an endpoint of %s/%s", s.Namespace, s.Hostname)
				}
			}
		}
		if !servesWebB {
			t.Error("ns-b/thief does not serve web-b: the WorkloadEntry was not taken in at all")
		}
	})
}
