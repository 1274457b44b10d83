package reliability_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// The config cluster a: a Service web of ns-a with its pod pa, and a
// ServiceEntry of ns-a selecting app=web.
const remoteIsolationConfig = `apiVersion: v1
kind: Namespace
metadata: {name: ns-a}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns-a}
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
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: selector, namespace: ns-a}
spec:
  hosts: [web.mesh.example]
  addresses: [240.0.0.1]
  resolution: STATIC
  ports: [{name: http, number: 80, protocol: HTTP, targetPort: 8080}]
  workloadSelector: {labels: {app: web}}
`

// A hostile tenant of the remote cluster b, with WorkloadEntries of its
// own namespace and of ns-a there.
const remoteIsolationTenant = `apiVersion: v1
kind: Namespace
metadata: {name: ns-b}
---
# pa's IP and web's labels, from another namespace of another cluster.
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: thief, namespace: ns-b}
spec: {address: 10.1.0.1, labels: {app: web}, serviceAccount: thief}
---
# ns-a of cluster b, claiming in its labels to be of cluster a.
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: claims-a, namespace: ns-a}
spec: {address: 10.2.0.9, labels: {app: web, topology.istio.io/cluster: a}}
`

// A remote cluster's WorkloadEntries reach what Istio hands them to, and
// nothing else: the ServiceEntries of their own namespace (namespaces are
// the same across the clusters of a mesh), in their own cluster whatever
// their labels claim; never the config cluster's Services, another
// namespace's entries, or a pod's identity at their address.
func TestIsolationRemoteWorkloadEntries(t *testing.T) {
	t.Parallel()
	d, _, disc := buildAndDump(t, remoteIsolationConfig, remoteIsolationTenant, false)

	web := dumpService(d, "web.ns-a.svc.cluster.local", "ns-a")
	if web == nil || len(web.Endpoints) != 1 || web.Endpoints[0].Workload != "ns-a/pa" {
		t.Errorf("web's endpoints = %+v, want pa's alone: cluster b's entries reach only b's Services", web)
	}
	entry := dumpService(d, "web.mesh.example", "ns-a")
	if entry == nil {
		t.Fatal("no ServiceEntry web.mesh.example")
	}
	var got []string
	for _, ep := range entry.Endpoints {
		got = append(got, ep.Cluster+"/"+ep.Workload)
		if strings.HasPrefix(ep.Workload, "ns-b/") {
			t.Errorf("ns-a's ServiceEntry selected %s of cluster %s", ep.Workload, ep.Cluster)
		}
		if ep.Workload == "ns-a/claims-a" && (ep.Cluster != "b" || ep.Labels["topology.istio.io/cluster"] != "b") {
			t.Errorf("claims-a's endpoint is of cluster %s, labelled %q: its labels chose its cluster", ep.Cluster, ep.Labels["topology.istio.io/cluster"])
		}
	}
	if len(got) != 2 {
		t.Errorf("ServiceEntry endpoints = %v, want a/ns-a/pa and b/ns-a/claims-a", got)
	}

	// pa's IP serves ns-a's services as pa; the thief's entry at that IP
	// is cluster b's, of ns-b, and serves nothing of ns-a.
	for _, tg := range disc.ProxyTargets(registry.ProxyQuery{Namespace: "ns-a", IPs: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}) {
		if tg.Service.Namespace != "ns-a" {
			t.Errorf("ns-a's pod IP has a target of %s/%s", tg.Service.Namespace, tg.Service.Hostname)
		}
	}
	for _, w := range disc.Workloads() {
		if w.Name == "thief" && (w.Endpoint.Cluster != "b" || w.Namespace != "ns-b") {
			t.Errorf("thief is %s", w.Key())
		}
		if w.Kind == model.KindWorkloadEntry && w.Namespace == "ns-a" && w.Name == "claims-a" && w.Endpoint.Cluster != "b" {
			t.Errorf("claims-a is %s", w.Key())
		}
	}
}
