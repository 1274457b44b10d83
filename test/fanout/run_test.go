package fanout_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/meshreg/meshreg/test/fanout"
)

// TestRun drives the library's server over a small world: every proxy
// connects and gets the world, and every change reaches every sidecar and
// ztunnel.
func TestRun(t *testing.T) {
	w := fanout.World{Namespaces: 3, Services: 2, SharedServices: 6, Endpoints: 2}
	srv, err := fanout.NewServer(w.Objects(), nil)
	if err != nil {
		t.Fatal(err)
	}
	xdsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctlLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, xdsLis, ctlLis) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("server: %v", err)
		}
	}()

	rep, err := fanout.Run(ctx, fanout.Options{
		XDSAddr: xdsLis.Addr().String(), Control: fanout.Control{URL: "http://" + ctlLis.Addr().String()},
		World: w, Sidecars: 6, Ztunnels: 2, StreamsPerConn: 4, Burst: 3,
		Timeout: 20 * time.Second, Quiet: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A sidecar sees its namespace's Services and the shared ones.
	if rep.Clusters != w.Services+w.SharedServices {
		t.Errorf("clusters per sidecar = %d, want %d", rep.Clusters, w.Services+w.SharedServices)
	}
	if len(rep.Changes) != 3 {
		t.Fatalf("changes: %+v, want 3", rep.Changes)
	}
	for _, c := range rep.Changes {
		if c.Sidecars.N != 6 || c.Ztunnels.N != 2 || c.Bytes <= 0 {
			t.Errorf("change %s: %+v; want all 6 sidecars and 2 ztunnels to get it, and bytes sent", c.Name, c)
		}
		// Istio's debounce holds each change for 100ms of quiet.
		if c.Sidecars.P50 < 100 {
			t.Errorf("change %s reached sidecars in %vms, before the 100ms debounce", c.Name, c.Sidecars.P50)
		}
	}
	t.Logf("report: %+v", *rep)
	if rep.HeapIdle == 0 {
		t.Error("no idle heap measured")
	}
	// The table and the plot of a report beside itself.
	var table, plot bytes.Buffer
	if err := fanout.Table(&table, []*fanout.Report{rep}, []*fanout.Report{rep}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "| endpoint: sidecars p99 (ms) |") || !strings.Contains(table.String(), "| 1.00x |") {
		t.Errorf("table of a report beside itself:\n%s", table.String())
	}
	if err := fanout.Plot(&plot, [][]fanout.Series{{{System: "meshreg", Reports: []*fanout.Report{rep}}}}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(plot.String(), "<rect"); n != len(rep.Changes) {
		t.Errorf("plot of one report: %d bars, want one per change (%d)", n, len(rep.Changes))
	}
	if _, err := fanout.Run(ctx, fanout.Options{}); err != fanout.ErrNoProxies {
		t.Errorf("Run without proxies = %v, want ErrNoProxies", err)
	}
}
