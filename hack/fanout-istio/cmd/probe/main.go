// probe checks a fanout server (fanout-istio, or the library's half) with one
// Envoy-sidecar-like and one ztunnel-like delta ADS client, as the benchmark's
// load generator connects them:
//
//   - sidecar: node "sidecar~IP~client-0.NS~NS.svc.cluster.local", CDS
//     wildcard, then EDS by the names of the EDS clusters of the CDS response;
//   - ztunnel: node "ztunnel~IP~ztunnel-0.istio-system~istio-system.svc.cluster.local",
//     wildcard Address (WDS) and Authorization;
//
// both ACK every response. It prints what came, then optionally POSTs -apply
// FILE to /apply and waits until the sidecar gets a ClusterLoadAssignment
// holding -expect-ip (and reports the ztunnel's Address updates).
//
//	probe -xds-addr 127.0.0.1:15010 -control-addr 127.0.0.1:15014 -namespace ns-a \
//	      [-apply change.yaml -expect-ip 10.1.0.99] [-v]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"istio.io/istio/pkg/workloadapi"
)

const (
	typeCluster = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	typeCLA     = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	typeAddress = "type.googleapis.com/istio.workload.Address"
	typeAuthz   = "type.googleapis.com/istio.security.Authorization"
)

var verbose = flag.Bool("v", false, "print every resource")

func main() {
	xdsAddr := flag.String("xds-addr", "127.0.0.1:15010", "ADS address")
	controlAddr := flag.String("control-addr", "127.0.0.1:15014", "control API address")
	namespace := flag.String("namespace", "default", "the sidecar's namespace")
	sidecarIP := flag.String("sidecar-ip", "10.200.0.1", "the sidecar's instance IP")
	ztunnelIP := flag.String("ztunnel-ip", "10.201.0.1", "the ztunnel's instance IP")
	istioVersion := flag.String("istio-version", "1.31.0", "ISTIO_VERSION metadata (empty: not sent)")
	applyFile := flag.String("apply", "", "YAML to POST to /apply after the initial state arrived")
	expectIP := flag.String("expect-ip", "", "with -apply: an endpoint IP the sidecar's EDS must then contain")
	timeout := flag.Duration("timeout", 30*time.Second, "timeout for each wait")
	noMeta := flag.Bool("no-metadata", false, "send the node ID only, no node metadata (to see what Istio requires)")
	burst := flag.Int("burst", 0, "at the end, open this many more sidecar streams at once and report how many got their CDS")
	flag.Parse()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := "http://" + *controlAddr
	t0 := time.Now()
	for !ready(base) {
		if time.Since(t0) > 5*time.Minute {
			fail("server at %s not ready", base)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("control: /ready 200 after %v of polling\n", time.Since(t0).Round(time.Millisecond))

	conn, err := grpc.NewClient(*xdsAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		fail("dial: %v", err)
	}
	defer conn.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)

	// Sidecar.
	sc := open(ctx, ads, "sidecar")
	meta := map[string]any{"NAMESPACE": *namespace, "CLUSTER_ID": "Kubernetes", "INSTANCE_IPS": *sidecarIP}
	if *istioVersion != "" {
		meta["ISTIO_VERSION"] = *istioVersion
	}
	if *noMeta {
		meta = nil
	}
	scNode := node(fmt.Sprintf("sidecar~%s~client-0.%s~%s.svc.cluster.local", *sidecarIP, *namespace, *namespace), meta)
	start := time.Now()
	sc.send(&discoveryv3.DeltaDiscoveryRequest{Node: scNode, TypeUrl: typeCluster})
	cds := sc.next(typeCluster, *timeout)
	var edsNames []string
	for _, r := range cds.Resources {
		c := &clusterv3.Cluster{}
		if err := r.Resource.UnmarshalTo(c); err != nil {
			fail("CDS %s: %v", r.Name, err)
		}
		if c.GetType() == clusterv3.Cluster_EDS {
			edsNames = append(edsNames, c.Name)
		}
		if *verbose {
			fmt.Printf("  CDS %s type=%v\n", c.Name, c.GetType())
		}
	}
	sort.Strings(edsNames)
	fmt.Printf("sidecar: CDS after %v: %d clusters, %d of type EDS: %s\n", time.Since(start).Round(time.Millisecond),
		len(cds.Resources), len(edsNames), strings.Join(truncate(edsNames), " "))
	sc.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: typeEndpointOrEmpty(edsNames), ResourceNamesSubscribe: edsNames})
	clas := map[string]*endpointv3.ClusterLoadAssignment{}
	for len(edsNames) > 0 && len(clas) < len(edsNames) {
		for _, cla := range decodeCLAs(sc.next(typeCLA, *timeout)) {
			clas[cla.ClusterName] = cla
		}
	}
	fmt.Printf("sidecar: EDS after %v: %d ClusterLoadAssignments\n", time.Since(start).Round(time.Millisecond), len(clas))
	for i, n := range edsNames {
		if i == 10 && !*verbose {
			fmt.Printf("  ... (%d more)\n", len(edsNames)-10)
			break
		}
		fmt.Printf("  %s: %s\n", n, endpointsString(clas[n]))
	}

	// ztunnel.
	zt := open(ctx, ads, "ztunnel")
	zmeta := map[string]any{"NAMESPACE": "istio-system", "CLUSTER_ID": "Kubernetes", "INSTANCE_IPS": *ztunnelIP}
	if *istioVersion != "" {
		zmeta["ISTIO_VERSION"] = *istioVersion
	}
	if *noMeta {
		zmeta = nil
	}
	ztNode := node(fmt.Sprintf("ztunnel~%s~ztunnel-0.istio-system~istio-system.svc.cluster.local", *ztunnelIP), zmeta)
	start = time.Now()
	zt.send(&discoveryv3.DeltaDiscoveryRequest{Node: ztNode, TypeUrl: typeAddress})
	zt.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: typeAuthz})
	wds := zt.next(typeAddress, *timeout)
	fmt.Printf("ztunnel: WDS after %v: %s\n", time.Since(start).Round(time.Millisecond), addressesString(wds))
	authz := zt.next(typeAuthz, *timeout)
	fmt.Printf("ztunnel: Authorization: %d resources\n", len(authz.Resources))

	if *applyFile != "" {
		applyAndWait(base, *applyFile, *expectIP, sc, zt, *timeout)
	}
	if *burst > 0 {
		burstConnect(ctx, ads, *burst, *namespace, meta, *timeout)
	}
}

// applyAndWait POSTs file to /apply and waits until the sidecar gets a
// ClusterLoadAssignment holding expectIP (any EDS update if expectIP is
// empty); then reports the ztunnel's Address updates of the next second.
func applyAndWait(base, file, expectIP string, sc, zt *stream, timeout time.Duration) {
	body, err := os.ReadFile(file)
	if err != nil {
		fail("%v", err)
	}
	start := time.Now()
	resp, err := http.Post(base+"/apply", "application/yaml", bytes.NewReader(body))
	if err != nil {
		fail("apply: %v", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("control: POST /apply %s -> %s %s (%v)\n", file, resp.Status, strings.TrimSpace(string(msg)),
		time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusOK {
		os.Exit(1)
	}
	for {
		r := sc.next(typeCLA, timeout)
		found := false
		for _, cla := range decodeCLAs(r) {
			fmt.Printf("sidecar: EDS update after %v: %s: %s\n", time.Since(start).Round(time.Millisecond), cla.ClusterName, endpointsString(cla))
			found = found || expectIP == "" || strings.Contains(" "+endpointsString(cla)+" ", " "+expectIP+":")
		}
		if len(r.RemovedResources) > 0 {
			fmt.Printf("sidecar: EDS removed %v\n", r.RemovedResources)
		}
		if found {
			break
		}
	}
	// The ztunnel gets the changed workloads too; report what came within a second.
	deadline := time.Now().Add(time.Second)
	for {
		r := zt.tryNext(typeAddress, time.Until(deadline))
		if r == nil {
			break
		}
		fmt.Printf("ztunnel: WDS update after %v: %s, removed %v\n", time.Since(start).Round(time.Millisecond), addressesString(r), r.RemovedResources)
	}
}

// burstConnect opens n sidecar streams at once (distinct node IDs and IPs),
// each asking for CDS, and reports how many got it and how the others failed.
func burstConnect(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, n int, ns string, meta map[string]any,
	timeout time.Duration,
) {
	start := time.Now()
	var mu sync.Mutex
	errs := map[string]int{}
	ok := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := func() error {
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				s, err := ads.DeltaAggregatedResources(ctx)
				if err != nil {
					return err
				}
				ip := fmt.Sprintf("10.200.%d.%d", 1+i/250, 1+i%250)
				m := maps.Clone(meta)
				if m != nil {
					m["INSTANCE_IPS"] = ip
				}
				id := fmt.Sprintf("sidecar~%s~client-%d.%s~%s.svc.cluster.local", ip, i+1, ns, ns)
				if err := s.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node(id, m), TypeUrl: typeCluster}); err != nil {
					return err
				}
				_, err = s.Recv()
				return err
			}()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[err.Error()]++
			} else {
				ok++
			}
		})
	}
	wg.Wait()
	fmt.Printf("burst: %d of %d sidecar streams got CDS in %v\n", ok, n, time.Since(start).Round(time.Millisecond))
	for e, c := range errs {
		fmt.Printf("burst: %d failed: %s\n", c, e)
	}
}

// typeEndpointOrEmpty is the EDS type URL, or "" to skip the request when
// there is nothing to subscribe to (an empty subscription would be wildcard).
func typeEndpointOrEmpty(names []string) string {
	if len(names) == 0 {
		fail("no EDS clusters to subscribe to")
	}
	return typeCLA
}

// truncate returns the first 10 names, and "..." if there are more, unless -v.
func truncate(names []string) []string {
	if *verbose || len(names) <= 10 {
		return names
	}
	return append(slices.Clone(names[:10]), fmt.Sprintf("... (%d more)", len(names)-10))
}

func ready(base string) bool {
	resp, err := http.Get(base + "/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// node is an xDS node with the ID and, unless meta is nil, the metadata.
func node(id string, meta map[string]any) *corev3.Node {
	if meta == nil {
		return &corev3.Node{Id: id}
	}
	s, err := structpb.NewStruct(meta)
	if err != nil {
		fail("metadata: %v", err)
	}
	return &corev3.Node{Id: id, Metadata: s}
}

// stream is one delta ADS stream: a goroutine receives every response, ACKs
// it and queues it by type URL.
type stream struct {
	name string
	mu   sync.Mutex // serializes Send
	s    discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	in   map[string]chan *discoveryv3.DeltaDiscoveryResponse
}

func open(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, name string) *stream {
	s, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		fail("%s: %v", name, err)
	}
	st := &stream{name: name, s: s, in: map[string]chan *discoveryv3.DeltaDiscoveryResponse{}}
	for _, t := range []string{typeCluster, typeCLA, typeAddress, typeAuthz} {
		st.in[t] = make(chan *discoveryv3.DeltaDiscoveryResponse, 1000)
	}
	go func() {
		for {
			r, err := s.Recv()
			if err != nil {
				if ctx.Err() == nil && status.Code(err) != codes.Canceled {
					fail("%s: receive: %v", name, err)
				}
				return
			}
			st.send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: r.TypeUrl, ResponseNonce: r.Nonce})
			ch, ok := st.in[r.TypeUrl]
			if !ok {
				fmt.Printf("%s: unexpected %s response (%d resources)\n", name, r.TypeUrl, len(r.Resources))
				continue
			}
			ch <- r
		}
	}()
	return st
}

func (st *stream) send(r *discoveryv3.DeltaDiscoveryRequest) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.s.Send(r); err != nil {
		fail("%s: send: %v", st.name, err)
	}
}

func (st *stream) next(typeURL string, timeout time.Duration) *discoveryv3.DeltaDiscoveryResponse {
	r := st.tryNext(typeURL, timeout)
	if r == nil {
		fail("%s: no %s response within %v", st.name, typeURL, timeout)
	}
	return r
}

func (st *stream) tryNext(typeURL string, timeout time.Duration) *discoveryv3.DeltaDiscoveryResponse {
	select {
	case r := <-st.in[typeURL]:
		return r
	case <-time.After(timeout):
		return nil
	}
}

func decodeCLAs(r *discoveryv3.DeltaDiscoveryResponse) []*endpointv3.ClusterLoadAssignment {
	var out []*endpointv3.ClusterLoadAssignment
	for _, res := range r.Resources {
		cla := &endpointv3.ClusterLoadAssignment{}
		if err := res.Resource.UnmarshalTo(cla); err != nil {
			fail("EDS %s: %v", res.Name, err)
		}
		out = append(out, cla)
	}
	return out
}

// endpointsString lists a CLA's endpoints as "IP:PORT[(HEALTH)]", sorted.
func endpointsString(cla *endpointv3.ClusterLoadAssignment) string {
	if cla == nil {
		return "(none received)"
	}
	var eps []string
	for _, l := range cla.Endpoints {
		for _, e := range l.LbEndpoints {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			s := fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
			if h := e.GetHealthStatus(); h != corev3.HealthStatus_UNKNOWN && h != corev3.HealthStatus_HEALTHY {
				s += "(" + h.String() + ")"
			}
			eps = append(eps, s)
		}
	}
	slices.Sort(eps)
	if len(eps) == 0 {
		return "(no endpoints)"
	}
	return strings.Join(eps, " ")
}

// addressesString summarizes WDS Address resources: counts of workloads and
// services, and with -v each one.
func addressesString(r *discoveryv3.DeltaDiscoveryResponse) string {
	var workloads, services []string
	for _, res := range r.Resources {
		a := &workloadapi.Address{}
		if err := res.Resource.UnmarshalTo(a); err != nil {
			fail("WDS %s: %v", res.Name, err)
		}
		if w := a.GetWorkload(); w != nil {
			workloads = append(workloads, fmt.Sprintf("%s/%s(%s)", w.Namespace, w.Name, res.Name))
		} else if s := a.GetService(); s != nil {
			services = append(services, s.Hostname)
		}
	}
	sort.Strings(workloads)
	sort.Strings(services)
	out := fmt.Sprintf("%d resources: %d workloads, %d services", len(r.Resources), len(workloads), len(services))
	if *verbose || len(r.Resources) <= 5 {
		out += "\n    workloads: " + strings.Join(workloads, " ") + "\n    services: " + strings.Join(services, " ")
	}
	return out
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "probe: "+format+"\n", args...)
	os.Exit(1)
}
