package address_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry/memory"
)

// TestIncrementalEqualsFresh holds the index's dependency tracking to
// its meaning: after every step of random changes to two clusters'
// metadata (networks, namespace labels, waypoints, east-west gateways)
// and to the workloads and services that use it, the running index,
// which re-derived only what the step's changes reached, holds what an
// index built afresh over the same registry holds.
func TestIncrementalEqualsFresh(t *testing.T) {
	for _, multi := range []bool{false, true} {
		t.Run(fmt.Sprintf("multi=%v", multi), func(t *testing.T) {
			for seed := range uint64(6) {
				incrementalWorld(t, seed, multi)
			}
		})
	}
}

func incrementalWorld(t *testing.T, seed uint64, multi bool) {
	rng := rand.New(rand.NewPCG(seed, 7))
	clusters := []model.ClusterID{"c1", "c2"}
	regs := map[model.ClusterID]*memory.Registry{}
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		reg, err := memory.New(memory.Options{ClusterID: c})
		if err != nil {
			t.Fatal(err)
		}
		regs[c] = reg
		if err := agg.Add(reg); err != nil {
			t.Fatal(err)
		}
	}
	opts := address.Options{Debounce: -1, ConfigCluster: "c1", MultiNetwork: multi, ServiceScopes: []model.ServiceScope{
		{ServiceSelector: &model.LabelSelector{MatchLabels: map[string]string{"scope": "global"}}, Global: true}}}
	idx, err := address.New(agg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{}, 2)
	go func() { _ = agg.Run(ctx); done <- struct{}{} }()
	go func() { _ = idx.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()

	settled := func() bool {
		for _, c := range clusters {
			if !regs[c].Settled() {
				return false
			}
		}
		return agg.Settled() && idx.Settled() && idx.HasSynced()
	}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	namespaces := []string{"ns-a", "ns-b"}
	ip := func(c model.ClusterID, i int) string {
		if c == "c1" {
			return fmt.Sprintf("10.1.0.%d", i)
		}
		return fmt.Sprintf("10.2.0.%d", i)
	}
	for step := range 40 {
		c := clusters[rng.IntN(len(clusters))]
		reg := regs[c]
		var did string
		switch rng.IntN(9) {
		case 0:
			n := model.NetworkID(pick("net1", "net2"))
			reg.SetNetwork(n)
			did = fmt.Sprintf("%s on %s", c, n)
		case 1, 2:
			ns := pick(namespaces...)
			labels := map[string]string{}
			if v := pick("", "wp-a", "wp-b", "none"); v != "" {
				labels["istio.io/use-waypoint"] = v
			}
			if v := pick("", "", "ns-a", "ns-b"); v != "" {
				labels["istio.io/use-waypoint-namespace"] = v
			}
			if v := pick("", "wp-b"); v != "" {
				labels["istio.io/use-waypoint-canary"] = v
			}
			annotations := map[string]string{}
			if v := pick("", "20", "150"); v != "" {
				annotations[model.AnnotationWaypointCanaryWeight] = v
			}
			reg.AddNamespace(&model.Namespace{Name: ns, Labels: labels, Annotations: annotations})
			did = fmt.Sprintf("namespace %s/%s labels %v annotations %v", c, ns, labels, annotations)
		case 3, 4:
			ns, name := pick(namespaces...), pick("wp-a", "wp-b")
			if rng.IntN(5) == 0 {
				reg.DeleteGateway(ns, name)
				did = fmt.Sprintf("gateway %s/%s/%s deleted", c, ns, name)
				break
			}
			var addrs []model.GatewayAddress
			if v := pick("", "10.9.0.1", "10.9.0.2", "wp.example.com"); v != "" {
				typ := model.IPAddressType
				if v == "wp.example.com" {
					typ = model.HostnameType
				}
				addrs = append(addrs, model.GatewayAddress{Type: typ, Value: v})
			}
			gw := waypointGateway(ns, name, pick("service", "workload", "all"), pick("", model.FromAll, model.FromSame), addrs...)
			if rng.IntN(3) == 0 {
				gw.Labels["team"] = pick("x", "y") // a change the index does not read
			}
			reg.AddGateway(gw)
			did = fmt.Sprintf("waypoint %s/%s/%s at %v", c, ns, name, addrs)
		case 5:
			n := pick("net1", "net2")
			if rng.IntN(4) == 0 {
				reg.DeleteGateway("istio-system", "eastwest")
				did = fmt.Sprintf("east-west gateway of %s deleted", c)
				break
			}
			class, tls := "istio-east-west", &model.GatewayTLS{Mode: "Terminate"}
			if c == "c1" {
				class, tls = "istio-remote", nil
			}
			reg.AddGateway(&model.Gateway{Namespace: "istio-system", Name: "eastwest", Class: class,
				Labels:          map[string]string{"topology.istio.io/network": n},
				Listeners:       []model.GatewayListener{{Name: "mesh", Port: 15008, Protocol: "HBONE", TLS: tls}},
				StatusAddresses: []model.GatewayAddress{{Type: model.IPAddressType, Value: pick("192.0.2.1", "192.0.2.2")}}})
			did = fmt.Sprintf("east-west gateway of %s for %s", c, n)
		case 6, 7:
			i := rng.IntN(6)
			name, ns := fmt.Sprintf("p%d", i), namespaces[i%2]
			if rng.IntN(5) == 0 {
				reg.DeleteWorkload(model.WorkloadKey{Cluster: c, Kind: model.KindPod, Namespace: ns, Name: name})
				did = fmt.Sprintf("pod %s/%s/%s deleted", c, ns, name)
				break
			}
			labels := map[string]string{"app": pick("x", "y")}
			if v := pick("", "", "wp-a", "none"); v != "" {
				labels["istio.io/use-waypoint"] = v
			}
			if rng.IntN(6) == 0 {
				labels["gateway.networking.k8s.io/gateway-name"] = "wp-a"
			}
			reg.AddWorkload(memory.Workload(name, ns).Cluster(c).Address(ip(c, i)).Labels(labels).NamedPort("http", 8080).
				ServiceAccount("spiffe://cluster.local/ns/" + ns + "/sa/" + name).Build())
			did = fmt.Sprintf("pod %s/%s/%s labels %v", c, ns, name, labels)
		case 8:
			ns := pick(namespaces...)
			labels := map[string]string{}
			if v := pick("", "wp-b", "none"); v != "" {
				labels["istio.io/use-waypoint"] = v
			}
			if rng.IntN(2) == 0 {
				labels["scope"] = "global"
			}
			vip := "10.96.1.1"
			if c == "c2" {
				vip = "10.96.2.1"
			}
			reg.AddService(memory.Service("svc", ns).Cluster(c).Port("http", 80).VIP(vip).
				Selector(map[string]string{"app": pick("x", "y")}).Labels(labels).Build())
			did = fmt.Sprintf("service %s/%s/svc labels %v", c, ns, labels)
		}
		waitFor(t, "the step to settle", settled)
		got := writeIndex(t, idx.Snapshot())
		want := freshIndex(t, agg, opts)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d, step %d (%s): the running index differs from a fresh one (-fresh +running):\n%s", seed, step, did, diff)
		}
	}
}

// freshIndex builds an index over src and returns it written once it
// has synced and settled.
func freshIndex(t *testing.T, src *aggregate.Controller, opts address.Options) string {
	t.Helper()
	idx, err := address.New(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = idx.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for !idx.HasSynced() || !idx.Settled() {
		if time.Now().After(deadline) {
			t.Fatal("the fresh index did not settle")
		}
		time.Sleep(time.Millisecond)
	}
	return writeIndex(t, idx.Snapshot())
}

func writeIndex(t *testing.T, s *address.Snapshot) string {
	t.Helper()
	var b bytes.Buffer
	if err := address.WriteJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
