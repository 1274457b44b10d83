package wds_test

import (
	"errors"
	"testing"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/meshreg/meshreg/address"
	"github.com/meshreg/meshreg/internal/promtest"
	"github.com/meshreg/meshreg/registry/memory"
	"github.com/meshreg/meshreg/wds"
)

// TestMetrics makes the server's metrics move: a ztunnel's stream opens
// and is sent the index; a workload added is sent, with its delay; a
// NACK is counted; an authorization request is answered; the stream
// closes.
func TestMetrics(t *testing.T) {
	reg, err := memory.New(memory.Options{ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	reg.AddWorkload(memory.Workload("a", "ns").Address("10.0.0.1").Build())
	prom := prometheus.NewRegistry()
	e := newEnv(t, reg, envOptions{serverOpts: wds.Options{Metrics: prom}})
	addrType := []string{"type", wds.TypeURL}
	ztunnel := []string{"client", "ztunnel"}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		return promtest.Value(t, prom, name, labels...)
	}

	// Connected once the index holds the workload: the first response
	// answers the request and carries no change made after it.
	waitIndex(t, e.idx, func(s *address.Snapshot) bool { return s.Synced() && s.Len() == 1 })
	c := connect(t, e.conn, wildcardRequest())
	first := c.next()
	for _, m := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"meshreg_xds_streams", ztunnel, 1},
		{"meshreg_xds_responses_total", addrType, 1},
		{"meshreg_xds_resources_sent_total", addrType, 1},
		// The first response answers a request: it carries no change.
		{"meshreg_xds_change_to_response_seconds", addrType, 0},
	} {
		if got := value(m.name, m.labels...); got != m.want {
			t.Errorf("after the first response: %s%v = %v, want %v", m.name, m.labels, got, m.want)
		}
	}

	before := time.Now()
	reg.AddWorkload(memory.Workload("b", "ns").Address("10.0.0.2").Build())
	second := c.next()
	if got := names(second); len(got) != 1 {
		t.Fatalf("after a workload was added: %v, want it alone", got)
	}
	took := time.Since(before)
	promtest.Eventually(t, prom, 1, "meshreg_xds_change_to_response_seconds", addrType...)
	if sum := promtest.Sum(t, prom, "meshreg_xds_change_to_response_seconds", addrType...); sum <= 0 || sum > took.Seconds() {
		t.Errorf("change to response observed %vs; want more than 0 and at most the %v the test saw", sum, took)
	}
	for _, m := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"meshreg_xds_responses_total", addrType, 2},
		{"meshreg_xds_resources_sent_total", addrType, 2},
		{"meshreg_xds_pending", ztunnel, 0},
	} {
		if got := value(m.name, m.labels...); got != m.want {
			t.Errorf("after the change was sent: %s%v = %v, want %v", m.name, m.labels, got, m.want)
		}
	}

	c.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: wds.TypeURL, ResponseNonce: first.GetNonce(), ErrorDetail: &rpcstatus.Status{Message: "no"}})
	promtest.Eventually(t, prom, 1, "meshreg_xds_nacks_total", addrType...)

	// The stream as Streams shows it: the second response sent and
	// acknowledged (next acknowledges each), the first rejected after.
	var st wds.StreamStatus
	deadline := time.Now().Add(timeout)
	for {
		streams := e.srv.Streams()
		if len(streams) == 1 {
			st = streams[0]
		}
		if st.Acked.Nonce == second.GetNonce() && st.NACK != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st.Node != wildcardRequest().GetNode().GetId() || !st.Wildcard || st.Subscribed != 0 ||
		st.Sent.Nonce != second.GetNonce() || st.Sent.Version != second.GetSystemVersionInfo() || st.Sent.Resources != 1 ||
		st.Acked != st.Sent || st.NACK != "no" || !st.Owed.IsZero() {
		t.Errorf("Streams() = %+v; want the wildcard stream, sent and acknowledged %s, rejected with \"no\", nothing owed", st, second.GetNonce())
	}

	const authorization = "type.googleapis.com/istio.security.Authorization"
	c.send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: authorization})
	c.next()
	promtest.Eventually(t, prom, 1, "meshreg_xds_responses_total", "type", authorization)

	c.disconnect()
	promtest.Eventually(t, prom, 0, "meshreg_xds_streams", ztunnel...)
}

// TestMetricsRefused: a Registerer that refuses the metrics is an error
// of New.
func TestMetricsRefused(t *testing.T) {
	reg, err := memory.New(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prom := prometheus.NewRegistry()
	prom.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "meshreg_xds_streams", Help: "taken"}))
	idx := newEnv(t, reg, envOptions{}).idx
	if _, err := wds.New(idx, wds.Options{Metrics: prom}); !errors.Is(err, wds.ErrInvalidOptions) {
		t.Errorf("New on a Registerer holding meshreg_xds_streams with other labels = %v, want ErrInvalidOptions", err)
	}
}
