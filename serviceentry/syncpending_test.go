package serviceentry

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	istioinformers "istio.io/client-go/pkg/informers/externalversions"
	clientfeatures "k8s.io/client-go/features"

	"github.com/meshreg/meshreg/internal/syncreport"
	"github.com/meshreg/meshreg/model"
	"github.com/meshreg/meshreg/registry"
)

// records is a slog.Handler that keeps the records of one message and
// signals each on got.
type records struct {
	msg string
	got chan slog.Record

	mu   sync.Mutex
	seen []slog.Record
}

func newRecords(msg string) *records { return &records{msg: msg, got: make(chan slog.Record, 1)} }

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != r.msg {
		return nil
	}
	r.mu.Lock()
	r.seen = append(r.seen, rec)
	r.mu.Unlock()
	select {
	case r.got <- rec:
	default:
	}
	return nil
}

// next waits for the next record, failing the test if none comes in a
// long while (the record is due after a few milliseconds).
func (r *records) next(t *testing.T) slog.Record {
	t.Helper()
	select {
	case rec := <-r.got:
		return rec
	case <-time.After(30 * time.Second):
		t.Fatalf("no %q record", r.msg)
	}
	return slog.Record{}
}

// attr returns a record's attribute.
func attr(rec slog.Record, key string) slog.Value {
	var v slog.Value
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

// The hang of issue 49: istio client-go's generated informers, over its
// fake clientset, stream their initial list (client-go's watch-list
// protocol, on by default) and wait for ever for the bookmark the fake
// never sends. The registry says so: its log names the kinds whose
// informers have not listed, again while it waits, and so do
// PendingSync and WaitSynced's error.
func TestSyncReportNamesTheInformersThatHang(t *testing.T) {
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Skip("client-go's WatchListClient feature is off in this environment (KUBE_FEATURE_WatchListClient): nothing hangs")
	}
	factory := istioinformers.NewSharedInformerFactory(istiofake.NewSimpleClientset(), 0)
	src, err := NewSharedInformerSource(factory, SharedInformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs := newRecords(syncreport.Message)
	c, err := New(src, Options{ClusterID: "east", Logger: slog.New(logs), SyncReportInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	shard := model.ShardKey{Provider: model.External, Cluster: "east"}
	if got, want := c.PendingSync(), []registry.Pending{{Shard: shard, Reason: registry.PendingRun}}; !slices.Equal(got, want) {
		t.Errorf("PendingSync before Run = %v, want %v", got, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	factory.Start(ctx.Done())
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		factory.Shutdown()
	}()

	want := []registry.Pending{
		{Shard: shard, Reason: registry.PendingList, Kind: "ServiceEntry"},
		{Shard: shard, Reason: registry.PendingList, Kind: "WorkloadEntry"},
	}
	wantLogged := []string{"External/east: initial list of ServiceEntry", "External/east: initial list of WorkloadEntry"}
	for i := range 2 { // the first report, and one again while it waits
		rec := logs.next(t)
		if rec.Level != slog.LevelWarn {
			t.Errorf("report %d at level %v, want WARN", i, rec.Level)
		}
		if got, _ := attr(rec, "pending").Any().([]string); !slices.Equal(got, wantLogged) {
			t.Errorf("report %d: pending = %q, want %q", i, got, wantLogged)
		}
	}
	if got := c.PendingSync(); !slices.Equal(got, want) {
		t.Errorf("PendingSync = %v, want %v", got, want)
	}

	expired, cancelWait := context.WithCancel(context.Background())
	cancelWait()
	err = registry.WaitSynced(expired, c)
	var se *registry.SyncError
	if !errors.As(err, &se) || !slices.Equal(se.Pending, want) {
		t.Errorf("WaitSynced = %v, want a *registry.SyncError naming %v", err, want)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WaitSynced = %v, which does not wrap context.Canceled", err)
	}
	if err != nil && err.Error() != "registry: not synced, waiting for External/east: initial list of ServiceEntry; External/east: initial list of WorkloadEntry: context canceled" {
		t.Errorf("WaitSynced's error says %q", err)
	}
}

// The fix on the source's own informers: over istio client-go's fake as
// it is (no wrapper saying it cannot stream), an InformerSource lists,
// and the registry syncs with what the fake holds.
func TestInformerSourceSyncsOnIstioFake(t *testing.T) {
	src, err := NewInformerSource(istiofake.NewSimpleClientset(load(t, selSE)...), InformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(src, Options{ClusterID: "east"})
	if err != nil {
		t.Fatal(err)
	}
	startController(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := registry.WaitSynced(ctx, c); err != nil {
		t.Fatal(err)
	}
	if c.PendingSync() != nil {
		t.Errorf("PendingSync after the sync = %v, want nil", c.PendingSync())
	}
	if svc := c.GetService("sel.internal"); svc == nil {
		t.Errorf("the fake's ServiceEntry is not in the registry")
	}
}
