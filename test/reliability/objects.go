package reliability

import (
	"fmt"
	"net"
	"strings"
)

// The specs below are the few knobs of each object the generator turns;
// each renders to one YAML document. They are small on purpose: a
// divergence is easier to read over five objects than over fifty.

// NamespaceSpec is a Namespace: Selected sets the label the harness's
// namespace selector matches; Network sets topology.istio.io/network,
// which matters on istio-system (the cluster's network).
type NamespaceSpec struct {
	Name     string
	Selected bool
	Network  string
}

// Key returns the World key of the object.
func (s NamespaceSpec) Key() string { return "Namespace//" + s.Name }

// YAML renders the object.
func (s NamespaceSpec) YAML() string {
	labels := map[string]string{}
	if s.Selected {
		labels[SelectorLabel] = "on"
	}
	if s.Network != "" {
		labels["topology.istio.io/network"] = s.Network
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n%s", s.Name, labelsYAML("  ", labels))
}

// NodeSpec is a Node with a region and zone, and optionally an external
// IP and the label NodePort gateways select (GatewayNodeLabel).
type NodeSpec struct {
	Name, Region, Zone string
	ExternalIP         string
	GatewayNode        bool
}

// GatewayNodeLabel is the label, set to "yes", of the nodes a NodePort
// gateway Service selects.
const GatewayNodeLabel = "gateway"

// Key returns the World key of the object.
func (s NodeSpec) Key() string { return "Node//" + s.Name }

// YAML renders the object.
func (s NodeSpec) YAML() string {
	labels := map[string]string{}
	if s.Region != "" {
		labels["topology.kubernetes.io/region"] = s.Region
	}
	if s.Zone != "" {
		labels["topology.kubernetes.io/zone"] = s.Zone
	}
	if s.GatewayNode {
		labels[GatewayNodeLabel] = "yes"
	}
	out := fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n%s", s.Name, labelsYAML("  ", labels))
	if s.ExternalIP != "" {
		out += fmt.Sprintf("status:\n  addresses:\n  - type: ExternalIP\n    address: %s\n", s.ExternalIP)
	}
	return out
}

// ServiceSpec is a Service selecting app=App with one port.
type ServiceSpec struct {
	Namespace, Name string
	App             string // selector app label; "" for no selector
	VIP             string // "" for headless
	PortName        string
	Port            int32
	TargetPort      int32
	PublishNotReady bool
	ExportTo        string // networking.istio.io/exportTo annotation, "" for none
	// A network gateway: Network is its topology.istio.io/network
	// label; with NodePort the Service is a NodePort gateway of the
	// nodes labelled GatewayNodeLabel, node port NodePort, else a
	// LoadBalancer with Ingress ("" pending; an IP or a host name).
	Network  string
	NodePort int32
	Ingress  string
}

// Key returns the World key of the object.
func (s ServiceSpec) Key() string { return "Service/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s ServiceSpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\n", s.Name, s.Namespace)
	if s.Network != "" {
		fmt.Fprintf(&b, "  labels:\n    topology.istio.io/network: %s\n", s.Network)
	}
	if s.ExportTo != "" || s.NodePort != 0 {
		b.WriteString("  annotations:\n")
	}
	if s.ExportTo != "" {
		fmt.Fprintf(&b, "    networking.istio.io/exportTo: %q\n", s.ExportTo)
	}
	if s.NodePort != 0 {
		fmt.Fprintf(&b, "    traffic.istio.io/nodeSelector: '{\"%s\": \"yes\"}'\n", GatewayNodeLabel)
	}
	// As the API server stores it: type, the port's protocol and
	// clusterIPs defaulted (the oracle's fake clients default nothing).
	typ := "ClusterIP"
	switch {
	case s.NodePort != 0:
		typ = "NodePort"
	case s.Network != "":
		typ = "LoadBalancer"
	}
	fmt.Fprintf(&b, "spec:\n  type: %s\n", typ)
	if s.VIP == "" {
		b.WriteString("  clusterIP: None\n  clusterIPs: [None]\n")
	} else {
		fmt.Fprintf(&b, "  clusterIP: %s\n  clusterIPs: [%s]\n", s.VIP, s.VIP)
	}
	if s.App != "" {
		fmt.Fprintf(&b, "  selector:\n    app: %s\n", s.App)
	}
	if s.PublishNotReady {
		b.WriteString("  publishNotReadyAddresses: true\n")
	}
	fmt.Fprintf(&b, "  ports:\n  - name: %s\n    port: %d\n    protocol: TCP\n    targetPort: %d\n", s.PortName, s.Port, s.TargetPort)
	if s.NodePort != 0 {
		fmt.Fprintf(&b, "    nodePort: %d\n", s.NodePort)
	}
	if s.Network != "" && s.NodePort == 0 && s.Ingress != "" {
		field := "ip"
		if net.ParseIP(s.Ingress) == nil {
			field = "hostname"
		}
		fmt.Fprintf(&b, "status:\n  loadBalancer:\n    ingress:\n    - %s: %s\n", field, s.Ingress)
	}
	return b.String()
}

// SliceEndpoint is one endpoint of an EndpointSlice.
type SliceEndpoint struct {
	IP          string
	Pod         string // targetRef pod name in the slice's namespace; "" for none
	Node        string
	Ready       bool
	Serving     bool
	Terminating bool
}

// SliceSpec is an EndpointSlice of a Service with one port.
type SliceSpec struct {
	Namespace, Name string
	Service         string
	PortName        string
	Port            int32
	Endpoints       []SliceEndpoint
}

// Key returns the World key of the object.
func (s SliceSpec) Key() string { return "EndpointSlice/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s SliceSpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    kubernetes.io/service-name: %s\naddressType: IPv4\n",
		s.Name, s.Namespace, s.Service)
	fmt.Fprintf(&b, "ports:\n- name: %s\n  port: %d\n  protocol: TCP\n", s.PortName, s.Port)
	if len(s.Endpoints) == 0 {
		b.WriteString("endpoints: []\n")
		return b.String()
	}
	b.WriteString("endpoints:\n")
	for _, e := range s.Endpoints {
		fmt.Fprintf(&b, "- addresses: [%s]\n  conditions:\n    ready: %t\n    serving: %t\n    terminating: %t\n", e.IP, e.Ready, e.Serving, e.Terminating)
		if e.Node != "" {
			fmt.Fprintf(&b, "  nodeName: %s\n", e.Node)
		}
		if e.Pod != "" {
			fmt.Fprintf(&b, "  targetRef:\n    kind: Pod\n    namespace: %s\n    name: %s\n", s.Namespace, e.Pod)
		}
	}
	return b.String()
}

// PodSpec is a Pod with one IP.
type PodSpec struct {
	Namespace, Name string
	App             string
	IP              string // "" for a pod not yet given an IP
	Node            string
	Ready           bool
	Terminal        bool   // phase Succeeded
	ServiceAccount  string // "" for the API server's default, "default"
	Locality        string // topology.istio.io/locality label
	Network         string // topology.istio.io/network label
	TLS             bool   // security.istio.io/tlsMode: istio
}

// Key returns the World key of the object.
func (s PodSpec) Key() string { return "Pod/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s PodSpec) YAML() string {
	labels := map[string]string{}
	if s.App != "" {
		labels["app"] = s.App
	}
	if s.Locality != "" {
		labels["topology.istio.io/locality"] = s.Locality
	}
	if s.Network != "" {
		labels["topology.istio.io/network"] = s.Network
	}
	if s.TLS {
		labels["security.istio.io/tlsMode"] = "istio"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n%s", s.Name, s.Namespace, labelsYAML("  ", labels))
	b.WriteString("spec:\n")
	if s.Node != "" {
		fmt.Fprintf(&b, "  nodeName: %s\n", s.Node)
	}
	// As the API server stores it: the service account and the
	// container port's protocol defaulted.
	sa := s.ServiceAccount
	if sa == "" {
		sa = "default"
	}
	fmt.Fprintf(&b, "  serviceAccountName: %s\n", sa)
	b.WriteString("  containers:\n  - name: app\n    image: app\n    ports:\n    - name: http\n      containerPort: 8080\n      protocol: TCP\n")
	phase := "Running"
	if s.Terminal {
		phase = "Succeeded"
	}
	fmt.Fprintf(&b, "status:\n  phase: %s\n", phase)
	if s.IP != "" {
		fmt.Fprintf(&b, "  podIP: %s\n  podIPs:\n  - ip: %s\n", s.IP, s.IP)
	}
	ready := "False"
	if s.Ready {
		ready = "True"
	}
	fmt.Fprintf(&b, "  conditions:\n  - type: Ready\n    status: %q\n", ready)
	return b.String()
}

// ServiceEntrySpec is a ServiceEntry with one host and one port.
type ServiceEntrySpec struct {
	Namespace, Name string
	Host            string
	Resolution      string // STATIC, NONE, DNS
	Location        string // MESH_INTERNAL or MESH_EXTERNAL
	Addresses       []string
	SelectApp       string   // workloadSelector app label; "" for none
	Endpoints       []string // inline endpoint addresses (used without SelectApp)
	ExportTo        []string
	PortName        string
	Port            int32
	// Created is the creation timestamp (RFC 3339); precedence among
	// ServiceEntries of one host depends on it.
	Created string
}

// Key returns the World key of the object.
func (s ServiceEntrySpec) Key() string { return "ServiceEntry/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s ServiceEntrySpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata:\n  name: %s\n  namespace: %s\n", s.Name, s.Namespace)
	if s.Created != "" {
		fmt.Fprintf(&b, "  creationTimestamp: %q\n", s.Created)
	}
	fmt.Fprintf(&b, "spec:\n  hosts: [%q]\n  location: %s\n  resolution: %s\n", s.Host, s.Location, s.Resolution)
	if len(s.Addresses) > 0 {
		fmt.Fprintf(&b, "  addresses: [%s]\n", strings.Join(s.Addresses, ", "))
	}
	if len(s.ExportTo) > 0 {
		fmt.Fprintf(&b, "  exportTo: [%s]\n", quoteAll(s.ExportTo))
	}
	fmt.Fprintf(&b, "  ports:\n  - name: %s\n    number: %d\n    protocol: %s\n    targetPort: 8080\n", s.PortName, s.Port, strings.ToUpper(s.PortName))
	if s.SelectApp != "" {
		fmt.Fprintf(&b, "  workloadSelector:\n    labels:\n      app: %s\n", s.SelectApp)
	} else if len(s.Endpoints) > 0 {
		b.WriteString("  endpoints:\n")
		for _, a := range s.Endpoints {
			fmt.Fprintf(&b, "  - address: %s\n", a)
		}
	}
	return b.String()
}

// WorkloadEntrySpec is a WorkloadEntry.
type WorkloadEntrySpec struct {
	Namespace, Name string
	IP              string
	App             string
	Network         string
	ServiceAccount  string
}

// Key returns the World key of the object.
func (s WorkloadEntrySpec) Key() string { return "WorkloadEntry/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s WorkloadEntrySpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  address: %s\n", s.Name, s.Namespace, s.IP)
	if s.App != "" {
		fmt.Fprintf(&b, "  labels:\n    app: %s\n", s.App)
	}
	if s.Network != "" {
		fmt.Fprintf(&b, "  network: %s\n", s.Network)
	}
	if s.ServiceAccount != "" {
		fmt.Fprintf(&b, "  serviceAccount: %s\n", s.ServiceAccount)
	}
	return b.String()
}

// ServiceExportSpec is a ServiceExport (Kubernetes Multi-Cluster
// Services) of the Service of its name.
type ServiceExportSpec struct {
	Namespace, Name string
	Created         string // creationTimestamp, "" for none
}

// Key returns the World key of the object.
func (s ServiceExportSpec) Key() string { return "ServiceExport/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s ServiceExportSpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata:\n  name: %s\n  namespace: %s\n", s.Name, s.Namespace)
	if s.Created != "" {
		fmt.Fprintf(&b, "  creationTimestamp: %q\n", s.Created)
	}
	return b.String()
}

// ServiceImportSpec is a ServiceImport (Kubernetes Multi-Cluster
// Services): its type (ClusterSetIP or Headless), ClusterSet IPs (any
// string: an MCS controller may write a bad one) and one port.
type ServiceImportSpec struct {
	Namespace, Name string
	Type            string
	IPs             []string
	PortName        string
	Port            int32
}

// Key returns the World key of the object.
func (s ServiceImportSpec) Key() string { return "ServiceImport/" + s.Namespace + "/" + s.Name }

// YAML renders the object.
func (s ServiceImportSpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  type: %s\n", s.Name, s.Namespace, s.Type)
	if len(s.IPs) > 0 {
		fmt.Fprintf(&b, "  ips: [%s]\n", quoteAll(s.IPs))
	}
	fmt.Fprintf(&b, "  ports:\n  - name: %s\n    port: %d\n    protocol: TCP\n", s.PortName, s.Port)
	return b.String()
}

func labelsYAML(indent string, labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(indent + "labels:\n")
	for _, k := range sortedKeys(labels) {
		fmt.Fprintf(&b, "%s  %s: %q\n", indent, k, labels[k])
	}
	return b.String()
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
