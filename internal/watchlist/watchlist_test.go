package watchlist_test

import (
	"context"
	"testing"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	"github.com/meshreg/meshreg/internal/watchlist"
)

// An informer over istio client-go's fake clientset syncs when its
// ListerWatcher comes from ListerWatcher, and (with client-go's
// WatchListClient feature on, its default) hangs when it does not say:
// the reflector streams, and the fake never ends the initial events.
func TestInformerOverIstioFake(t *testing.T) {
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Skip("client-go's WatchListClient feature is off in this environment (KUBE_FEATURE_WatchListClient): nothing hangs")
	}
	se := &networkingv1.ServiceEntry{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ext"}}
	client := istiofake.NewSimpleClientset(se)
	lw := func() *cache.ListWatch {
		ses := client.NetworkingV1().ServiceEntries("")
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return ses.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ses.Watch(ctx, o)
			},
		}
	}
	run := func(lw cache.ListerWatcher, wait time.Duration) (synced bool, items int) {
		inf := cache.NewSharedIndexInformer(lw, &networkingv1.ServiceEntry{}, 0, cache.Indexers{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		wctx, wcancel := context.WithTimeout(ctx, wait)
		defer wcancel()
		synced = cache.WaitForCacheSync(wctx.Done(), inf.HasSynced)
		return synced, len(inf.GetStore().List())
	}

	if synced, items := run(watchlist.ListerWatcher(lw(), client), 30*time.Second); !synced || items != 1 {
		t.Errorf("informer over watchlist.ListerWatcher: synced %v with %d ServiceEntries, want synced with 1", synced, items)
	}
	// The hang this package avoids. The wait is short: the reflector,
	// streaming, never syncs however long it is given.
	if synced, _ := run(lw(), 200*time.Millisecond); synced {
		t.Errorf("informer over a plain ListWatch synced: client-go no longer streams from the fake, and this package may be unneeded")
	}
}
