package serviceentry

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/internal/manifest"
	"github.com/meshreg/meshreg/model"
)

var meshSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"mesh": "on"}}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// hosts returns the hostnames of c's services, sorted.
func hosts(c *Controller) []string {
	var out []string
	for _, s := range c.Services() {
		out = append(out, string(s.Hostname))
	}
	slices.Sort(out)
	return out
}

// A namespace whose labels come to match brings all its objects in, and
// one whose labels stop matching (or that is deleted) takes them out;
// objects of other namespaces are untouched.
func TestNamespaceSelectorFollowsLabels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, selSE+"---\n"+otherSE+"---\n"+we("w1", "ns", "a", "10.0.0.1"))...)
		_ = src.Upsert(namespace("ns", nil))
		c := start(t, src, Options{NamespaceSelector: meshSelector})
		synctest.Wait()
		if got := hosts(c); len(got) != 0 || len(c.Workloads()) != 0 {
			t.Fatalf("unselected namespace: services %v, workloads %v", got, c.Workloads())
		}
		rec := &recorder{}
		defer c.Subscribe(rec)()
		synctest.Wait()
		rec.take()

		_ = src.Upsert(namespace("ns", map[string]string{"mesh": "on"}))
		synctest.Wait()
		if got := hosts(c); !slices.Equal(got, []string{"other.internal", "sel.internal"}) {
			t.Errorf("selected: services %v", got)
		}
		if got := addrs(c, "sel.internal"); !slices.Equal(got, []string{"10.0.0.1/ns/w1"}) {
			t.Errorf("selected: endpoints %v", got)
		}
		if len(c.Workloads()) != 1 {
			t.Errorf("selected: workloads %v", c.Workloads())
		}
		// A change of other labels changes nothing.
		rec.take()
		_ = src.Upsert(namespace("ns", map[string]string{"mesh": "on", "team": "x"}))
		expectEvents(t, rec)

		_ = src.Upsert(namespace("ns", map[string]string{"mesh": "off"}))
		synctest.Wait()
		if got := hosts(c); len(got) != 0 || len(c.Workloads()) != 0 {
			t.Errorf("deselected: services %v, workloads %v", got, c.Workloads())
		}
		_ = src.Upsert(namespace("ns", map[string]string{"mesh": "on"}))
		synctest.Wait()
		src.DeleteNamespace("ns")
		synctest.Wait()
		if got := hosts(c); len(got) != 0 {
			t.Errorf("namespace deleted: services %v", got)
		}
	})
}

// An object's event that the controller takes before its namespace's (the
// source already showing the new labels) does not split the namespace:
// the namespace's own event then brings in all its objects.
func TestNamespaceSelectorObjectBeforeNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, _ := NewStaticSource(load(t, selSE+"---\n"+otherSE)...)
		_ = src.Upsert(namespace("ns", nil))
		c := start(t, src, Options{NamespaceSelector: meshSelector})
		synctest.Wait()
		// Relabel the namespace behind the controller's back (no event),
		// then change one entry: it stays out until the namespace's event.
		src.mu.Lock()
		src.namespaces["ns"] = map[string]string{"mesh": "on"}
		src.mu.Unlock()
		_ = src.Upsert(load(t, replace(otherSE, "10.9.0.2", "10.9.0.3"))...)
		synctest.Wait()
		if got := hosts(c); len(got) != 0 {
			t.Fatalf("before the namespace's event: services %v", got)
		}
		c.enqueue(Ref{Kind: KindNamespace, Name: "ns"})
		synctest.Wait()
		if got := hosts(c); !slices.Equal(got, []string{"other.internal", "sel.internal"}) {
			t.Errorf("after the namespace's event: services %v", got)
		}
	})
}

func TestNamespaceSelectorNeedsNamespaces(t *testing.T) {
	src, err := NewInformerSource(manifest.IstioClientset(nil), InformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(src, Options{NamespaceSelector: meshSelector}); err == nil {
		t.Error("an InformerSource without namespaces was taken for a NamespaceSelector")
	}
	if _, err := New(src, Options{}); err != nil {
		t.Errorf("without a selector: %v", err)
	}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Sometimes"}}}
	if _, err := New(&StaticSource{}, Options{NamespaceSelector: bad}); err == nil {
		t.Error("an invalid selector was taken")
	}
	if _, err := New(&failingSource{&StaticSource{}}, Options{NamespaceSelector: meshSelector}); err != nil {
		t.Errorf("a NamespaceSource embedded in another source: %v", err)
	}
}

// The informer source watches namespaces through a Kubernetes client,
// keeping only their labels, and a relabel reaches the controller.
func TestInformerSourceNamespaces(t *testing.T) {
	kc := kubefake.NewClientset(namespace("ns", map[string]string{"mesh": "on", "big": "x"}))
	objs := load(t, selSE+"---\n"+we("w1", "ns", "a", "10.0.0.1"))
	src, err := NewInformerSource(manifest.IstioClientset(objs), InformerOptions{Namespaces: kc})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(src, Options{NamespaceSelector: meshSelector})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	eventually(t, c.HasSynced)
	if got := hosts(c); !slices.Equal(got, []string{"sel.internal"}) {
		t.Fatalf("services %v", got)
	}
	if l, ok := src.NamespaceLabels("ns"); !ok || l["mesh"] != "on" {
		t.Errorf("namespace labels %v %v", l, ok)
	}
	if _, err := kc.CoreV1().Namespaces().Update(ctx, namespace("ns", nil), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return len(c.Services()) == 0 && len(c.Workloads()) == 0 })
	if c.ServiceByKey(model.ServiceKey{Namespace: "ns", Hostname: "sel.internal"}) != nil {
		t.Error("service left")
	}
}
