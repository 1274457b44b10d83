package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/meshreg/meshreg/internal/golden"
	"github.com/meshreg/meshreg/proxyview"
)

var update = flag.Bool("update", false, "rewrite the want.json of testdata/eds scenarios from what the server sends")

// edsRoot is the repository's root, from this package's directory; the
// paths in a scenario's args are relative to it.
const edsRoot = "../.."

// TestEDSScenarios runs the server on each scenario of testdata/eds and
// asks it, over ADS as each proxy of the scenario's proxies.yaml, for its
// clusters and their load assignments; what it is sent must be the
// scenario's want.json, in the form Istio's oracle prints (so that
// hack/oracle/eds.sh can compare the goldens with Istio's own xDS
// server; the README's "Where meshreg differs from Istio" lists the
// differences it allows).
func TestEDSScenarios(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(edsRoot, "testdata", "eds", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no EDS scenarios: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			golden.Check(t, filepath.Join(dir, "want.json"), runEDSScenario(t, dir), *update)
		})
	}
}

func runEDSScenario(t *testing.T, dir string) []byte {
	t.Helper()
	args := scenarioArgs(t, dir)
	c, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("args: %v", err)
	}
	reg, _, err := buildRegistry(c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resolver proxyview.Resolver
	if len(c.resolve) > 0 {
		resolver = c.resolve
	}
	s := startServerResolving(t, reg, proxyview.DebounceOptions{Quiet: time.Millisecond, Max: 10 * time.Millisecond}, nil, resolver)
	defer func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	}()
	conn, err := grpc.NewClient(s.xdsAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)

	out := edsOutput{Version: 1}
	for _, p := range scenarioProxies(t, dir) {
		po, err := fetchEDS(t.Context(), ads, p)
		if err != nil {
			t.Fatalf("proxy %s: %v", p.ID, err)
		}
		out.Proxies = append(out.Proxies, po)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// scenarioArgs reads a scenario's args (one flag or value a line, '#'
// lines ignored), with the paths it names made relative to this package.
func scenarioArgs(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	prev := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch prev {
		case "-cluster":
			name, path, _ := strings.Cut(line, "=")
			line = name + "=" + filepath.Join(edsRoot, path)
		case "-mesh-networks":
			line = filepath.Join(edsRoot, line)
		}
		args = append(args, line)
		prev = line
	}
	return args
}

// edsProxy is one proxy of a proxies.yaml (the oracle's format).
type edsProxy struct {
	ID        string            `json:"id"`
	Namespace string            `json:"namespace"`
	Cluster   string            `json:"cluster"`
	Network   string            `json:"network"`
	IPs       []string          `json:"ips"`
	Labels    map[string]string `json:"labels"`
	Locality  string            `json:"locality"`
	NodeName  string            `json:"nodeName"`
}

func scenarioProxies(t *testing.T, dir string) []edsProxy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "proxies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Proxies []edsProxy `json:"proxies"`
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		t.Fatalf("proxies.yaml: %v", err)
	}
	if len(f.Proxies) == 0 {
		t.Fatal("proxies.yaml lists no proxy")
	}
	return f.Proxies
}

// node is the xDS node a sidecar of Istio's bootstrap sends: its
// metadata keys, and its locality (at most three levels, the last taking
// any further slashes, as Istio reads a locality).
func (p edsProxy) node() (*corev3.Node, error) {
	md := map[string]any{}
	for k, v := range map[string]string{
		"NAMESPACE": p.Namespace, "CLUSTER_ID": p.Cluster, "NETWORK": p.Network,
		"INSTANCE_IPS": strings.Join(p.IPs, ","), "NODE_NAME": p.NodeName,
	} {
		if v != "" {
			md[k] = v
		}
	}
	if p.Labels != nil {
		labels := map[string]any{}
		for k, v := range p.Labels {
			labels[k] = v
		}
		md["LABELS"] = labels
	}
	st, err := structpb.NewStruct(md)
	if err != nil {
		return nil, err
	}
	n := &corev3.Node{Id: p.ID, Metadata: st}
	if p.Locality != "" {
		parts := append(strings.SplitN(p.Locality, "/", 3), "", "")
		n.Locality = &corev3.Locality{Region: parts[0], Zone: parts[1], SubZone: parts[2]}
	}
	return n, nil
}

// fetchEDS asks the server, as p over one state-of-the-world ADS stream,
// for every cluster, then for the load assignments of its outbound EDS
// clusters.
func fetchEDS(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, p edsProxy) (edsProxyOut, error) {
	po := edsProxyOut{ID: p.ID, Clusters: []edsClusterOut{}}
	node, err := p.node()
	if err != nil {
		return po, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return po, err
	}
	defer stream.CloseSend()
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}); err != nil {
		return po, err
	}
	clusters := map[string]string{} // cluster name → its EDS service name
	for {
		resp, err := stream.Recv()
		if err != nil {
			return po, fmt.Errorf("clusters: %w", err)
		}
		if resp.GetTypeUrl() != resource.ClusterType {
			continue
		}
		for _, a := range resp.GetResources() {
			var c clusterv3.Cluster
			if err := a.UnmarshalTo(&c); err != nil {
				return po, err
			}
			if c.GetType() == clusterv3.Cluster_EDS && strings.HasPrefix(c.GetName(), "outbound|") {
				clusters[c.GetName()] = cmp.Or(c.GetEdsClusterConfig().GetServiceName(), c.GetName())
			}
		}
		break
	}
	if len(clusters) == 0 {
		return po, nil
	}
	names := make([]string, 0, len(clusters))
	for _, n := range clusters {
		names = append(names, n)
	}
	slices.Sort(names)
	if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: names}); err != nil {
		return po, err
	}
	cla := map[string]*endpointv3.ClusterLoadAssignment{}
	for len(cla) < len(names) {
		resp, err := stream.Recv()
		if err != nil {
			return po, fmt.Errorf("load assignments (have %d of %d): %w", len(cla), len(names), err)
		}
		if resp.GetTypeUrl() != resource.EndpointType {
			continue
		}
		for _, a := range resp.GetResources() {
			var l endpointv3.ClusterLoadAssignment
			if err := a.UnmarshalTo(&l); err != nil {
				return po, err
			}
			cla[l.GetClusterName()] = &l
		}
	}
	for _, name := range slices.Sorted(maps.Keys(clusters)) {
		po.Clusters = append(po.Clusters, edsClusterOf(name, cla[clusters[name]]))
	}
	return po, nil
}

// The document, in the form of the oracle's istio-xds and xds-fetch:
// proxies in file order, clusters by name, endpoints by (locality,
// address, port, priority, weight, health).
type edsOutput struct {
	Version int           `json:"version"`
	Proxies []edsProxyOut `json:"proxies"`
}

type edsProxyOut struct {
	ID       string          `json:"id"`
	Clusters []edsClusterOut `json:"clusters"`
}

type edsClusterOut struct {
	Name            string            `json:"name"`
	Endpoints       []edsEndpointOut  `json:"endpoints"`
	LocalityWeights map[string]uint32 `json:"localityWeights,omitempty"`
}

type edsEndpointOut struct {
	Address  string `json:"address"`
	Port     uint32 `json:"port"`
	Locality string `json:"locality"`
	Weight   uint32 `json:"weight"`
	Health   string `json:"health"`
	Priority uint32 `json:"priority,omitempty"`
}

func edsClusterOf(name string, cla *endpointv3.ClusterLoadAssignment) edsClusterOut {
	co := edsClusterOut{Name: name, Endpoints: []edsEndpointOut{}}
	for _, le := range cla.GetEndpoints() {
		l := le.GetLocality()
		loc := strings.TrimRight(l.GetRegion()+"/"+l.GetZone()+"/"+l.GetSubZone(), "/")
		if w := le.GetLoadBalancingWeight(); w != nil {
			if co.LocalityWeights == nil {
				co.LocalityWeights = map[string]uint32{}
			}
			co.LocalityWeights[loc] += w.GetValue()
		}
		for _, lb := range le.GetLbEndpoints() {
			e := edsEndpointOut{Locality: loc, Weight: 1, Health: lb.GetHealthStatus().String(), Priority: le.GetPriority()}
			if lb.GetHealthStatus() == corev3.HealthStatus_UNKNOWN {
				e.Health = corev3.HealthStatus_HEALTHY.String()
			}
			if w := lb.GetLoadBalancingWeight(); w != nil {
				e.Weight = w.GetValue()
			}
			switch a := lb.GetEndpoint().GetAddress().GetAddress().(type) {
			case *corev3.Address_SocketAddress:
				e.Address, e.Port = a.SocketAddress.GetAddress(), a.SocketAddress.GetPortValue()
			case *corev3.Address_Pipe:
				e.Address = "unix://" + a.Pipe.GetPath()
			}
			co.Endpoints = append(co.Endpoints, e)
		}
	}
	slices.SortFunc(co.Endpoints, func(a, b edsEndpointOut) int {
		return cmp.Or(cmp.Compare(a.Locality, b.Locality), cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port),
			cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Weight, b.Weight), cmp.Compare(a.Health, b.Health))
	})
	return co
}
