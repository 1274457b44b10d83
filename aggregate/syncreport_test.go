package aggregate_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	istioinformers "istio.io/client-go/pkg/informers/externalversions"
	clientfeatures "k8s.io/client-go/features"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/aggregate"
	"github.com/meshreg/meshreg/debughttp"
	"github.com/meshreg/meshreg/internal/syncreport"
	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
	"github.com/meshreg/meshreg/serviceentry"
)

// reports is a slog.Handler that hands each sync report's pending list
// to a channel, dropping those the reader is not ready for.
type reports chan []string

func (r reports) Enabled(context.Context, slog.Level) bool { return true }
func (r reports) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r reports) WithGroup(string) slog.Handler            { return r }
func (r reports) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != syncreport.Message || rec.Level != slog.LevelWarn {
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if p, ok := a.Value.Any().([]string); ok && a.Key == "pending" {
			select {
			case r <- p:
			default:
			}
		}
		return true
	})
	return nil
}

// An aggregate whose ServiceEntry registry never syncs (istio client-go's
// generated informers hang on its fake clientset: see the serviceentry
// package doc) says which member and which informers hold it back: in
// its log, again while it waits, in PendingSync, WaitSynced's error, the
// meshreg_sync_pending metric and debughttp's /sync. The member that
// synced (the kube controller on client-go's fake) is not named.
func TestSyncReportNamesTheMemberAndInformers(t *testing.T) {
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Skip("client-go's WatchListClient feature is off in this environment (KUBE_FEATURE_WatchListClient): nothing hangs")
	}
	logs := make(reports, 1)
	metrics := prometheus.NewRegistry()
	agg, err := aggregate.New(aggregate.Options{Logger: slog.New(logs), SyncReportInterval: 5 * time.Millisecond, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kube.New(kubefake.NewClientset(), kube.Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	factory := istioinformers.NewSharedInformerFactory(istiofake.NewSimpleClientset(), 0)
	src, err := serviceentry.NewSharedInformerSource(factory, serviceentry.SharedInformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	se, err := serviceentry.New(src, serviceentry.Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []registry.Registry{kc, se} {
		if err := agg.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := agg.PendingSync(), []registry.Pending{{Reason: registry.PendingRun}}; !slices.Equal(got, want) {
		t.Errorf("PendingSync before Run = %v, want %v", got, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	factory.Start(ctx.Done())
	go func() { done <- agg.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		factory.Shutdown()
	}()

	external := model.ShardKey{Provider: model.External, Cluster: "east"}
	want := []registry.Pending{
		{Shard: external, Reason: registry.PendingList, Kind: "ServiceEntry"},
		{Shard: external, Reason: registry.PendingList, Kind: "WorkloadEntry"},
	}
	wantLogged := []string{"External/east: initial list of ServiceEntry", "External/east: initial list of WorkloadEntry"}
	// The reports come every 5ms; the first may still name the kube
	// controller, which syncs on its own.
	for seen := 0; seen < 2; {
		select {
		case got := <-logs:
			if slices.Equal(got, wantLogged) {
				seen++
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no sync report naming only %q", wantLogged)
		}
	}
	if got := agg.PendingSync(); !slices.Equal(got, want) {
		t.Errorf("PendingSync = %v, want %v", got, want)
	}

	expired, cancelWait := context.WithCancel(context.Background())
	cancelWait()
	err = registry.WaitSynced(expired, agg)
	var syncErr *registry.SyncError
	if !errors.As(err, &syncErr) || !slices.Equal(syncErr.Pending, want) || !errors.Is(err, context.Canceled) {
		t.Errorf("WaitSynced = %v, want a *registry.SyncError naming %v and wrapping context.Canceled", err, want)
	}

	families, err := metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var series []string
	for _, f := range families {
		if f.GetName() != "meshreg_sync_pending" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			series = append(series, l["registry"]+" "+l["pending_registry"]+"/"+l["pending_cluster"]+" "+l["reason"]+" "+l["kind"])
		}
	}
	wantSeries := []string{"aggregate External/east initial list ServiceEntry", "aggregate External/east initial list WorkloadEntry"}
	if !slices.Equal(series, wantSeries) {
		t.Errorf("meshreg_sync_pending series = %q, want %q", series, wantSeries)
	}

	rec := httptest.NewRecorder()
	debughttp.New(agg, debughttp.Options{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sync", nil))
	var page debughttp.Sync
	if err := json.Unmarshal(rec.Body.Bytes(), &page); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("/sync: %d %v: %s", rec.Code, err, rec.Body)
	}
	wantPage := debughttp.Sync{Synced: false, Pending: []debughttp.SyncPending{
		{Registry: "External", Cluster: "east", Reason: "initial list", Kind: "ServiceEntry"},
		{Registry: "External", Cluster: "east", Reason: "initial list", Kind: "WorkloadEntry"},
	}}
	if page.Synced != wantPage.Synced || !slices.Equal(page.Pending, wantPage.Pending) {
		t.Errorf("/sync = %+v, want %+v", page, wantPage)
	}
}

// Once synced, nothing is pending, and no series of the metric is left.
func TestSyncReportEmptyOnceSynced(t *testing.T) {
	agg, err := aggregate.New(aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kube.New(kubefake.NewClientset(), kube.Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	if err := agg.Add(kc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agg.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := registry.WaitSynced(wctx, agg); err != nil {
		t.Fatal(err)
	}
	if got := agg.PendingSync(); got != nil {
		t.Errorf("PendingSync once synced = %v, want nil", got)
	}
	if got := kc.PendingSync(); got != nil {
		t.Errorf("the kube controller's PendingSync once synced = %v, want nil", got)
	}
}
