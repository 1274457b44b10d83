package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestListWatchCountsLists: every List, and every watch that starts with
// the initial state (a watch list), is a list the lists function sees;
// a plain watch is not.
func TestListWatchCountsLists(t *testing.T) {
	n := 0
	lw := cache.ToListerWatcherWithContext(listWatch[*corev1.PodList](nil,
		func(context.Context, metav1.ListOptions) (*corev1.PodList, error) { return &corev1.PodList{}, nil },
		func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewEmptyWatch(), nil },
		func() { n++ }))
	ctx := context.Background()
	yes := true
	for _, step := range []func() error{
		func() error { _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); return err },
		func() error { _, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "5"}); return err },
		func() error {
			_, err := lw.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: &yes})
			return err
		},
		func() error { _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if n != 3 {
		t.Errorf("lists counted = %d, want 3 (two lists and a watch list)", n)
	}
}
