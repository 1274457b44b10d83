package crinformers_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	"github.com/meshreg/meshreg/kube"
	"github.com/meshreg/meshreg/kube/crinformers"
)

// KubeInformers takes the five kinds' informers from the cache, one per
// kind.
func TestKubeInformersTakesEachKind(t *testing.T) {
	s, err := crinformers.KubeInformers(context.Background(), &informertest.FakeInformers{})
	if err != nil {
		t.Fatal(err)
	}
	infs := []kube.SharedInformer{s.Services, s.EndpointSlices, s.Pods, s.Nodes, s.Namespaces}
	for i, a := range infs {
		if a == nil {
			t.Fatalf("informer %d is nil", i)
		}
		for _, b := range infs[i+1:] {
			if a == b {
				t.Errorf("two kinds share one informer")
			}
		}
	}
}

// A cache that cannot give an informer is an error naming the kind and
// wrapping the cache's.
func TestKubeInformersError(t *testing.T) {
	boom := errors.New("boom")
	_, err := crinformers.KubeInformers(context.Background(), &informertest.FakeInformers{Error: boom})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "Service") {
		t.Errorf("KubeInformers = %v, want an error naming the Service informer and wrapping the cache's", err)
	}
}
