package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/test/reliability"
	"github.com/meshreg/meshreg/test/sources"
)

// validA and validB are the valid objects every bad-input case runs next
// to, in namespace "good": a Service with a pod and its slice in each
// cluster, a ServiceEntry selecting the pod, and a WorkloadEntry the
// Service selects.
const validA = `apiVersion: v1
kind: Namespace
metadata: {name: good}
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: z1}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: good}
spec:
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: good, labels: {app: web}}
spec: {nodeName: node-a, serviceAccountName: web, containers: [{name: app, image: app}]}
status:
  phase: Running
  podIP: 10.1.0.1
  podIPs: [{ip: 10.1.0.1}]
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: good, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.1.0.1]
  conditions: {ready: true, serving: true, terminating: false}
  nodeName: node-a
  targetRef: {kind: Pod, namespace: good, name: web-1}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: pods, namespace: good, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  hosts: [web.mesh.internal]
  addresses: [240.0.0.10]
  resolution: STATIC
  ports: [{name: http, number: 80, protocol: HTTP, targetPort: 8080}]
  workloadSelector: {labels: {app: web}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: vm-1, namespace: good}
spec: {address: 10.2.0.1, labels: {app: web}, serviceAccount: vm}
`

const validB = `apiVersion: v1
kind: Namespace
metadata: {name: good}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: good}
spec:
  clusterIP: 10.97.0.10
  clusterIPs: [10.97.0.10]
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-b, namespace: good, labels: {app: web}}
spec: {containers: [{name: app, image: app}]}
status:
  phase: Running
  podIP: 10.3.0.1
  podIPs: [{ip: 10.3.0.1}]
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-b, namespace: good, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.3.0.1]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: good, name: web-b}
`

// badCase is one hostile input. The bad object lives in namespace "bad",
// or, when it must sit next to the valid ones, is named bad-*; every
// case holds one of:
//   - diag: a diagnostic of the kind and name given whose message holds
//     the text given;
//   - rule: a documented rule, checked by check over the whole dump.
type badCase struct {
	name    string
	cluster model.ClusterID // where the bad manifest goes; default "a"
	// mcs runs the case, and the valid objects it is compared with, with
	// Multi-Cluster Services on (discovery and ClusterSet hosts).
	mcs   bool
	yaml  string
	diag  *wantDiag
	rule  string
	check func(t *testing.T, d *registry.Dump, disc registry.Discovery)
}

type wantDiag struct{ kind, name, text string }

func svcYAML(name, spec string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: bad}\nspec:\n%s", name, spec)
}

func sliceYAML(name, body string) string {
	return fmt.Sprintf("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: %s, namespace: bad, labels: {kubernetes.io/service-name: svc}}\n%s", name, body)
}

func podYAML(name, meta, status string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: bad%s}\nspec: {containers: [{name: app, image: app}]}\nstatus:\n%s", name, meta, status)
}

func seYAML(name, ns, spec string) string {
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: %s, namespace: %s}\nspec:\n%s", name, ns, spec)
}

func weYAML(name, ns, spec string) string {
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: %s, namespace: %s}\nspec:\n%s", name, ns, spec)
}

func siYAML(name, ns, spec string) string {
	return fmt.Sprintf("apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: %s, namespace: %s}\nspec:\n%s", name, ns, spec)
}

const badNS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: bad}\n---\n"

// okSvc is a valid service in namespace bad, for slices to belong to.
var okSvc = svcYAML("svc", "  clusterIP: 10.96.1.1\n  selector: {app: svc}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n")

func manyPorts(n int) string {
	var b strings.Builder
	b.WriteString("  clusterIP: 10.96.1.2\n  ports:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: p%d, port: %d, targetPort: %d}\n", i, 1+i, 1+i)
	}
	return b.String()
}

func manyEndpoints(n int) string {
	var b strings.Builder
	b.WriteString("addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {addresses: [10.9.%d.%d], conditions: {ready: true}}\n", i/250, 1+i%250)
	}
	return b.String()
}

// megabyte is a label value of 1 MiB.
var megabyte = strings.Repeat("x", 1<<20)

const yamlBomb = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
apiVersion: v1
kind: ConfigMap
metadata: {name: bomb, namespace: bad}
`

func hasService(host, ns string) func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
	return func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
		t.Helper()
		for _, s := range d.Services {
			if s.Hostname == host && s.Namespace == ns {
				return
			}
		}
		t.Errorf("no service %s in %s", host, ns)
	}
}

func serviceEndpoints(d *registry.Dump, host, ns string) []registry.DumpEndpoint {
	for _, s := range d.Services {
		if s.Hostname == host && s.Namespace == ns {
			return s.Endpoints
		}
	}
	return nil
}

func badCases() []badCase {
	return []badCase{
		// Kubernetes Services.
		{name: "service without ports", yaml: svcYAML("noports", "  clusterIP: 10.96.1.3\n"),
			rule: "a Service without ports is kept, with no ports and no endpoints", check: hasService("noports.bad.svc.cluster.local", "bad")},
		{name: "service with 10k ports", yaml: svcYAML("manyports", manyPorts(10000)),
			rule: "every port is kept, in declaration order", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, s := range d.Services {
					if s.Name == "manyports" && len(s.Ports) != 10000 {
						t.Errorf("%d ports", len(s.Ports))
					}
				}
			}},
		{name: "service negative port", yaml: svcYAML("negport", "  clusterIP: 10.96.1.4\n  ports: [{name: http, port: -1}]\n"),
			diag: &wantDiag{"Service", "negport", "out of range"}},
		{name: "service port 70000", yaml: svcYAML("bigport", "  clusterIP: 10.96.1.5\n  ports: [{name: http, port: 70000}]\n"),
			diag: &wantDiag{"Service", "bigport", "out of range"}},
		{name: "service duplicate ports", yaml: svcYAML("dupports", "  clusterIP: 10.96.1.6\n  ports: [{name: http, port: 80}, {name: http, port: 80}]\n"),
			diag: &wantDiag{"Service", "dupports", "duplicate"}},
		{name: "service invalid cluster IP", yaml: svcYAML("badip", "  clusterIP: 10.96.0.300\n  ports: [{name: http, port: 80}]\n"),
			diag: &wantDiag{"Service", "badip", "10.96.0.300"}},
		{name: "service CIDR as cluster IP", yaml: svcYAML("cidrip", "  clusterIP: 10.96.0.0/16\n  ports: [{name: http, port: 80}]\n"),
			diag: &wantDiag{"Service", "cidrip", "10.96.0.0/16"}},
		{name: "service 1MB label", yaml: fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: biglabel, namespace: bad, labels: {big: %s}}\nspec: {clusterIP: 10.96.1.7, ports: [{name: http, port: 80}]}\n", megabyte),
			rule: "labels are data: kept as given", check: hasService("biglabel.bad.svc.cluster.local", "bad")},
		{name: "service unicode name", yaml: svcYAML("wéb-ü", "  clusterIP: 10.96.1.8\n  ports: [{name: http, port: 80}]\n"),
			rule: "names are not validated by the registry; the hostname carries the name as given", check: hasService("wéb-ü.bad.svc.cluster.local", "bad")},
		{name: "service external name not a host", yaml: svcYAML("extname", "  type: ExternalName\n  externalName: 'not a host!!'\n"),
			rule: "an ExternalName service is an alias to whatever name it gives, with no endpoints", check: hasService("extname.bad.svc.cluster.local", "bad")},
		{name: "service bad exportTo", yaml: "apiVersion: v1\nkind: Service\nmetadata: {name: badexport, namespace: bad, annotations: {networking.istio.io/exportTo: '~,*,,../x'}}\nspec: {clusterIP: 10.96.1.9, ports: [{name: http, port: 80}]}\n",
			rule: "exportTo is carried exactly (ARCHITECTURE.md decision 7); consumers apply it", check: hasService("badexport.bad.svc.cluster.local", "bad")},
		{name: "service unknown appProtocol", yaml: svcYAML("appproto", "  clusterIP: 10.96.1.10\n  ports: [{name: http, port: 80, appProtocol: 'quic/💥'}]\n"),
			rule: "an unknown protocol is sniffed (UnsupportedProtocol)", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, s := range d.Services {
					if s.Name == "appproto" && s.Ports[0].Protocol != "UnsupportedProtocol" {
						t.Errorf("protocol %q", s.Ports[0].Protocol)
					}
				}
			}},
		{name: "service selector matching everything", yaml: svcYAML("selectall", "  clusterIP: 10.96.1.11\n  selector: {}\n  ports: [{name: http, port: 80}]\n"),
			rule: "an empty selector selects nothing: no WorkloadEntry joins it", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				if eps := serviceEndpoints(d, "selectall.bad.svc.cluster.local", "bad"); len(eps) != 0 {
					t.Errorf("endpoints %v", eps)
				}
			}},
		{name: "service LoadBalancer garbage ingress", yaml: "apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: bad}\nspec: {type: LoadBalancer, clusterIP: 10.96.1.12, ports: [{name: http, port: 80}]}\nstatus: {loadBalancer: {ingress: [{hostname: '!!'}, {ip: '1.2.3.999'}]}}\n",
			rule: "external addresses are carried as given", check: hasService("lb.bad.svc.cluster.local", "bad")},
		{name: "duplicate names in one manifest", yaml: svcYAML("twice", "  clusterIP: 10.96.1.13\n  ports: [{name: http, port: 80}]\n") + "---\n" + svcYAML("twice", "  clusterIP: 10.96.1.14\n  ports: [{name: http, port: 81}]\n"),
			rule: "the last document of a kind, namespace and name wins", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, s := range d.Services {
					if s.Name == "twice" && s.Ports[0].Port != 81 {
						t.Errorf("port %d, want 81", s.Ports[0].Port)
					}
				}
			}},

		// EndpointSlices.
		{name: "slice invalid address", yaml: okSvc + "---\n" + sliceYAML("badaddr", "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.1.0.999], conditions: {ready: true}}]\n"),
			diag: &wantDiag{"EndpointSlice", "badaddr", "10.1.0.999"}},
		{name: "slice CIDR address", yaml: okSvc + "---\n" + sliceYAML("cidraddr", "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.1.0.0/24], conditions: {ready: true}}]\n"),
			diag: &wantDiag{"EndpointSlice", "cidraddr", "10.1.0.0/24"}},
		{name: "slice without service label", yaml: "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: nolabel, namespace: bad}\naddressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.5.0.1]}]\n",
			rule: "a slice of no service is ignored", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "slice negative port", yaml: okSvc + "---\n" + sliceYAML("negport", "addressType: IPv4\nports: [{name: http, port: -5}]\nendpoints: [{addresses: [10.5.0.2], conditions: {ready: true}}]\n"),
			diag: &wantDiag{"EndpointSlice", "negport", "number -5 out of range"}},
		{name: "slice IPv4 type holding hostnames", yaml: okSvc + "---\n" + sliceYAML("hostnames", "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [db.example.com], conditions: {ready: true}}]\n"),
			diag: &wantDiag{"EndpointSlice", "hostnames", "db.example.com"}},
		{name: "endpoint in two slices", yaml: okSvc + "---\n" + sliceYAML("dup-1", "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.5.0.3], conditions: {ready: true}}]\n") + "---\n" + sliceYAML("dup-2", "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.5.0.3], conditions: {ready: true}}]\n"),
			rule: "an address listed by several slices is one endpoint (ARCHITECTURE.md decision 8)", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				if eps := serviceEndpoints(d, "svc.bad.svc.cluster.local", "bad"); len(eps) != 1 {
					t.Errorf("%d endpoints, want 1", len(eps))
				}
			}},
		{name: "slice naming a pod of another namespace", yaml: okSvc + "---\n" + sliceYAML("foreignpod", "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.1.0.1], conditions: {ready: true}, targetRef: {kind: Pod, namespace: good, name: web-1}}]\n"),
			rule: "the endpoint belongs to the slice's service only; the good service is untouched", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "slice with 2000 endpoints", yaml: okSvc + "---\n" + sliceYAML("huge", manyEndpoints(2000)),
			rule: "every endpoint is kept", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				if eps := serviceEndpoints(d, "svc.bad.svc.cluster.local", "bad"); len(eps) != 2000 {
					t.Errorf("%d endpoints, want 2000", len(eps))
				}
			}},

		// Pods.
		{name: "pod invalid IP", yaml: podYAML("badip", "", "  phase: Running\n  podIP: 999.1.1.1\n  podIPs: [{ip: 999.1.1.1}]\n"),
			rule: "a pod without a valid IP is no workload", check: noWorkload("badip")},
		{name: "pod CIDR as IP", yaml: podYAML("cidrip", "", "  phase: Running\n  podIP: 10.6.0.0/16\n"),
			rule: "a pod without a valid IP is no workload", check: noWorkload("cidrip")},
		{name: "pod reusing a good pod's IP", yaml: podYAML("sameip", ", labels: {app: web}", "  phase: Running\n  podIP: 10.1.0.1\n  podIPs: [{ip: 10.1.0.1}]\n"),
			rule: "the pod is a workload of its own namespace; the good endpoint keeps its pod (targetRef)", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "pod 1MB label", yaml: podYAML("biglabel", ", labels: {big: "+megabyte+"}", "  phase: Running\n  podIP: 10.6.0.2\n"),
			rule: "labels are data: kept as given", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "pod unicode labels", yaml: podYAML("unilabel", ", labels: {'ключ': 'значение', app: '🙂'}", "  phase: Running\n  podIP: 10.6.0.3\n"),
			rule: "labels are data: kept as given", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "pod failed with IP", yaml: podYAML("failed", "", "  phase: Failed\n  podIP: 10.6.0.4\n"),
			rule: "a terminal pod is no workload", check: noWorkload("failed")},
		{name: "pod on unknown node with garbage locality", yaml: podYAML("loc", ", labels: {topology.istio.io/locality: '/////'}", "  phase: Running\n  podIP: 10.6.0.5\n"),
			rule: "locality is parsed leniently", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},

		// Nodes and namespaces.
		{name: "node with garbage topology", yaml: "apiVersion: v1\nkind: Node\nmetadata: {name: bad-node, labels: {topology.kubernetes.io/region: 'a/b/c', topology.kubernetes.io/zone: ''}}\n",
			rule: "a node no pod uses changes nothing", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "namespace with 1MB label", yaml: "apiVersion: v1\nkind: Namespace\nmetadata: {name: bad2, labels: {big: " + megabyte + "}}\n",
			rule: "namespaces only select; no selector is configured", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},

		// ServiceEntries.
		{name: "service entry without hosts", yaml: seYAML("nohosts", "bad", "  hosts: []\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "nohosts", "hosts: none given"}},
		{name: "service entry empty host", yaml: seYAML("emptyhost", "bad", "  hosts: ['']\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "emptyhost", "hosts"}},
		{name: "service entry host *", yaml: seYAML("star", "bad", "  hosts: ['*']\n  resolution: NONE\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "star", "alone is not allowed"}},
		{name: "service entry unicode host", yaml: seYAML("unihost", "bad", "  hosts: ['bücher.example']\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "unihost", "bücher"}},
		{name: "service entry STATIC hostname endpoint", yaml: seYAML("staticname", "bad", "  hosts: [s.example.com]\n  resolution: STATIC\n  ports: [{name: http, number: 80, protocol: HTTP}]\n  endpoints: [{address: not-an-ip}]\n"),
			diag: &wantDiag{"ServiceEntry", "staticname", "not-an-ip"}},
		{name: "service entry invalid address", yaml: seYAML("badaddr", "bad", "  hosts: [a.example.com]\n  addresses: [300.1.1.1]\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "badaddr", "300.1.1.1"}},
		{name: "service entry port 0 and 70000", yaml: seYAML("badports", "bad", "  hosts: [p.example.com]\n  ports: [{name: a, number: 0, protocol: HTTP}, {name: b, number: 70000, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "badports", "out of range"}},
		{name: "service entry duplicate port names", yaml: seYAML("dupnames", "bad", "  hosts: [d.example.com]\n  ports: [{name: a, number: 80, protocol: HTTP}, {name: a, number: 81, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "dupnames", "duplicate name"}},
		{name: "service entry selecting everything", yaml: seYAML("selectall", "bad", "  hosts: [all.example.com]\n  addresses: [240.0.0.11]\n  resolution: STATIC\n  ports: [{name: http, number: 80, protocol: HTTP}]\n  workloadSelector: {labels: {}}\n"),
			rule: "a workloadSelector selects workloads of its own namespace only: none of good's", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, ep := range serviceEndpoints(d, "all.example.com", "bad") {
					if strings.HasPrefix(ep.Workload, "good/") {
						t.Errorf("selected %s", ep.Workload)
					}
				}
			}},
		{name: "service entry taking a Kubernetes hostname in its namespace", yaml: seYAML("bad-takeover", "good", "  hosts: [web.good.svc.cluster.local]\n  addresses: [240.0.0.12]\n  resolution: STATIC\n  ports: [{name: http, number: 80, protocol: HTTP}]\n  endpoints: [{address: 10.7.0.1}]\n"),
			diag: &wantDiag{"ServiceEntry", "bad-takeover", "web.good.svc.cluster.local"}},
		{name: "service entry taking a Kubernetes hostname from another namespace", yaml: seYAML("other", "bad", "  hosts: [web.good.svc.cluster.local]\n  addresses: [240.0.0.13]\n  resolution: STATIC\n  ports: [{name: http, number: 80, protocol: HTTP}]\n  endpoints: [{address: 10.7.0.2}]\n"),
			rule: "services are keyed by namespace and hostname; GetService prefers the Kubernetes Service", check: func(t *testing.T, _ *registry.Dump, disc registry.Discovery) {
				if s := disc.GetService("web.good.svc.cluster.local"); s == nil || s.Provider != model.Kubernetes || s.Namespace != "good" {
					t.Errorf("GetService = %+v", s)
				}
			}},
		{name: "service entry unsupported resolution", yaml: seYAML("res", "bad", "  hosts: [r.example.com]\n  resolution: 42\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "res", "resolution"}},

		// WorkloadEntries.
		{name: "workload entry claiming a good pod's IP", yaml: weYAML("thief", "bad", "  address: 10.1.0.1\n  labels: {app: web}\n"),
			rule: "a WorkloadEntry joins services of its own namespace only; proxy targets of good's pod IP stay good's", check: func(t *testing.T, _ *registry.Dump, disc registry.Discovery) {
				for _, tg := range disc.ProxyTargets(registry.ProxyQuery{Namespace: "good", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}) {
					if tg.Service.Namespace != "good" {
						t.Errorf("target %s/%s", tg.Service.Namespace, tg.Service.Hostname)
					}
				}
			}},
		{name: "workload entry without address or network", yaml: weYAML("noaddr", "bad", "  labels: {app: x}\n"),
			diag: &wantDiag{"WorkloadEntry", "noaddr", "address"}},
		{name: "workload entry CIDR address", yaml: weYAML("cidr", "bad", "  address: 10.8.0.0/16\n"),
			diag: &wantDiag{"WorkloadEntry", "cidr", "10.8.0.0/16"}},
		{name: "workload entry 1MB label", yaml: weYAML("biglabel", "bad", "  address: 10.8.0.1\n  labels: {big: "+megabyte+"}\n"),
			rule: "labels are data: kept as given", check: func(*testing.T, *registry.Dump, registry.Discovery) {}},
		{name: "workload entry huge port", yaml: weYAML("bigport", "bad", "  address: 10.8.0.2\n  ports: {http: 99999}\n"),
			diag: &wantDiag{"WorkloadEntry", "bigport", "99999"}},

		// Multi-Cluster Services (with MCS on).
		{name: "service import with bad IPs", mcs: true, yaml: siYAML("badips", "bad", "  type: ClusterSetIP\n  ips: ['not-an-ip', '10.96.0.300', 'fe80::1%eth0']\n  ports: [{name: http, port: 80}]\n"),
			diag: &wantDiag{"ServiceImport", "badips", "not an IP address"}},
		{name: "service import port 70000", mcs: true, yaml: okSvc + "---\n" + siYAML("svc", "bad", "  type: ClusterSetIP\n  ips: [242.0.0.1]\n  ports: [{name: http, port: 70000}]\n"),
			diag: &wantDiag{"ServiceImport", "svc", "out of range"}},
		{name: "service import without a spec", mcs: true, yaml: siYAML("nospec", "bad", "  {}\n"),
			diag: &wantDiag{"ServiceImport", "nospec", "no ClusterSet IP"}},
		{name: "service export of another namespace's Service", mcs: true, yaml: "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: web, namespace: bad}\n",
			diag: &wantDiag{"ServiceExport", "web", "not found"}, rule: "an export counts in its own namespace: good's web stays unexported (the valid dump)"},
		{name: "service import claiming another Service's VIP", mcs: true, yaml: siYAML("web", "bad", "  type: ClusterSetIP\n  ips: [10.96.0.10]\n  ports: [{name: http, port: 80}]\n"),
			diag: &wantDiag{"ServiceImport", "web", "no cluster has the Service bad/web"}, check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, s := range d.Services {
					if s.Namespace == "bad" {
						t.Errorf("the import made a service: %s", s.Hostname)
					}
				}
			}},
		{name: "service import of a tenant's own Service with another's VIP", mcs: true, yaml: okSvc + "---\n" + siYAML("svc", "bad", "  type: ClusterSetIP\n  ips: [10.96.0.10]\n  ports: [{name: http, port: 80}]\n"),
			rule: "the ClusterSet host is the tenant's own, in its namespace, with the tenant's endpoints only", check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, ep := range serviceEndpoints(d, "svc.bad.svc.clusterset.local", "bad") {
					if strings.HasPrefix(ep.Workload, "good/") {
						t.Errorf("ClusterSet host has %s", ep.Workload)
					}
				}
			}},

		// The loader.
		{name: "YAML bomb", yaml: yamlBomb, diag: &wantDiag{"ConfigMap", "", "expands past"}},
		{name: "not YAML", yaml: "{{{{ [[[ :::", diag: &wantDiag{"Document", "", "not loaded"}},
		{name: "unknown kind", yaml: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: bad}\n", diag: &wantDiag{"Widget", "", "not loaded"}},
		{name: "Istio object outside the config cluster", cluster: "b", yaml: seYAML("elsewhere", "bad", "  hosts: [e.example.com]\n  ports: [{name: http, number: 80, protocol: HTTP}]\n"),
			diag: &wantDiag{"ServiceEntry", "elsewhere", "config cluster"}},
		{name: "object without a name", yaml: "apiVersion: v1\nkind: Service\nmetadata: {namespace: bad}\nspec: {clusterIP: 10.96.1.20, ports: [{name: http, port: 80}]}\n",
			diag: &wantDiag{"Service", "", "metadata.name is missing"}, check: func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
				for _, s := range d.Services {
					if s.Name == "" {
						t.Errorf("service without a name: %s", s.Hostname)
					}
				}
			}},
	}
}

func noWorkload(name string) func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
	return func(t *testing.T, d *registry.Dump, _ registry.Discovery) {
		t.Helper()
		for _, w := range d.Workloads {
			if w.Name == name && w.Namespace == "bad" {
				t.Errorf("workload %s present", name)
			}
		}
	}
}

// buildAndDump builds the aggregate of the manifests of clusters a and b
// through sources.Build, runs it until it is quiet, and returns its dump
// and the discovery (valid until the test ends).
func buildAndDump(t *testing.T, a, b string, mcs bool) (*registry.Dump, []byte, registry.Discovery) {
	t.Helper()
	cfg := sources.Config{Clusters: []sources.Cluster{
		{ID: "a", Manifests: "a.yaml", FS: fstest.MapFS{"a.yaml": {Data: []byte(a)}}},
		{ID: "b", Manifests: "b.yaml", FS: fstest.MapFS{"b.yaml": {Data: []byte(b)}}},
	}}
	if mcs {
		cfg.MCS = sources.MCS{ServiceDiscovery: true, Host: true}
	}
	h, err := reliability.StartConfig(cfg, reliability.World{})
	if err != nil {
		t.Fatalf("sources.Build: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	raw, err := h.Settle(ctx, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var d registry.Dump
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d, raw, h.Built.Discovery
}

// restrict keeps what belongs to the valid objects: namespace "good", no
// name starting with "bad", and no diagnostic of a manifest document.
func restrict(t *testing.T, d *registry.Dump) []byte {
	t.Helper()
	keep := func(ns, name string) bool { return ns == "good" && !strings.HasPrefix(name, "bad") }
	out := registry.Dump{Version: d.Version, Services: []registry.DumpService{}, Workloads: []registry.DumpWorkload{}, Diagnostics: []registry.DumpDiagnostic{}}
	for _, s := range d.Services {
		if keep(s.Namespace, s.Name) {
			out.Services = append(out.Services, s)
		}
	}
	for _, w := range d.Workloads {
		if keep(w.Namespace, w.Name) {
			out.Workloads = append(out.Workloads, w)
		}
	}
	for _, g := range d.Diagnostics {
		if keep(g.Namespace, g.Name) {
			out.Diagnostics = append(out.Diagnostics, g)
		}
	}
	var b bytes.Buffer
	if err := out.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBadInputCatalogue feeds each hostile object next to the valid ones
// through the real path (manifests → sources.Build → aggregate): it must
// yield the diagnostic or follow the rule its row states, never panic,
// and leave the dump of the valid objects byte-identical.
func TestBadInputCatalogue(t *testing.T) {
	t.Parallel()
	cases := badCases()
	if len(cases) < 40 {
		t.Fatalf("%d cases, want at least 40", len(cases))
	}
	wants := map[bool][]byte{} // by MCS on
	for _, mcs := range []bool{false, true} {
		_, baseRaw, _ := buildAndDump(t, validA, validB, mcs)
		var base registry.Dump
		if err := json.Unmarshal(baseRaw, &base); err != nil {
			t.Fatal(err)
		}
		wants[mcs] = restrict(t, &base)
		if len(base.Services) < 2 || len(base.Workloads) < 3 || len(base.Diagnostics) != 0 {
			t.Fatalf("the valid objects alone do not make the expected registry (MCS %v):\n%s", mcs, baseRaw)
		}
	}
	t.Logf("bad-input catalogue: %d objects", len(cases))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := validA, validB
			if tc.cluster == "b" {
				b += "---\n" + badNS + tc.yaml
			} else {
				a += "---\n" + badNS + tc.yaml
			}
			d, _, disc := buildAndDump(t, a, b, tc.mcs)
			if want := wants[tc.mcs]; !bytes.Equal(restrict(t, d), want) {
				got := restrict(t, d)
				t.Errorf("the valid objects' dump changed:\n%s", diffLines(string(want), string(got)))
			}
			if tc.diag != nil {
				found := false
				for _, g := range d.Diagnostics {
					if g.Kind == tc.diag.kind && (tc.diag.name == "" || g.Name == tc.diag.name) && strings.Contains(g.Message, tc.diag.text) {
						found = true
					}
				}
				if !found {
					t.Errorf("no %s diagnostic for %q containing %q; diagnostics: %s", tc.diag.kind, tc.diag.name, tc.diag.text, diagList(d))
				}
			}
			if tc.check != nil {
				tc.check(t, d, disc)
			}
			if tc.diag == nil && tc.check == nil {
				t.Fatal("a case must state a diagnostic or a rule")
			}
		})
	}
}

func diagList(d *registry.Dump) string {
	var b strings.Builder
	for _, g := range d.Diagnostics {
		fmt.Fprintf(&b, "\n  %s %s %s/%s: %.200s", g.Severity, g.Kind, g.Namespace, g.Name, g.Message)
	}
	return b.String()
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d:\n- %.200s\n+ %.200s\n", i+1, x, y)
		}
	}
	return out.String()
}
